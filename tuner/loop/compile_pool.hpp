#pragma once
/// The thread pool that runs NVRTC compiles ahead of the GPU (D6): the tuning loop submits every
/// candidate it is about to measure, the pool's threads (one per core by default) compile them in
/// submission order, and the loop takes each result when the GPU is ready for it. A task's
/// exception travels in its future.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace ktune::tuner {

class CompilePool {
 public:
  /// @param threads 0 = one per core (std::thread::hardware_concurrency(), at least 1)
  explicit CompilePool(std::size_t threads = 0);
  /// Drops tasks not yet started, waits for the running ones.
  ~CompilePool();
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  /// Queues `fn`; its result (or exception) arrives in the returned future.
  template <typename Fn>
  auto submit(Fn fn) -> std::future<std::invoke_result_t<Fn>> {
    using R = std::invoke_result_t<Fn>;
    auto task = std::make_shared<std::packaged_task<R()>>(std::move(fn));
    std::future<R> result = task->get_future();
    enqueue([task] { (*task)(); });
    return result;
  }

  std::size_t threads() const { return workers_.size(); }

 private:
  void enqueue(std::function<void()> job);
  void work();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace ktune::tuner
