#pragma once
/// The service's connection pool: a fixed number of threads serving connections and a bounded
/// queue of accepted ones waiting for a thread. When the queue is full the accepting thread waits
/// (new connections then wait in the kernel's listen backlog), so memory stays bounded however many
/// clients connect.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <httplib.h>

namespace ktune::service {

class BoundedTaskQueue : public httplib::TaskQueue {
 public:
  /// @param threads   connections served at once (each keeps its connection while it is alive)
  /// @param max_queue accepted connections waiting for a thread
  BoundedTaskQueue(size_t threads, size_t max_queue);
  ~BoundedTaskQueue() override;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

 private:
  void work();

  std::mutex mu_;
  std::condition_variable ready_;  ///< a task waits, or shutting down
  std::condition_variable room_;   ///< the queue has room
  std::deque<std::function<void()>> tasks_;
  size_t max_queue_;
  bool shutting_down_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ktune::service
