#include "service/bounded_task_queue.hpp"

namespace ktune::service {

BoundedTaskQueue::BoundedTaskQueue(size_t threads, size_t max_queue) : max_queue_(max_queue) {
  threads_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

BoundedTaskQueue::~BoundedTaskQueue() { shutdown(); }

void BoundedTaskQueue::enqueue(std::function<void()> fn) {
  std::unique_lock lock(mu_);
  room_.wait(lock, [this] { return tasks_.size() < max_queue_ || shutting_down_; });
  // After shutdown the task still runs (here): it owns the accepted socket and closes it.
  if (shutting_down_) {
    lock.unlock();
    fn();
    return;
  }
  tasks_.push_back(std::move(fn));
  ready_.notify_one();
}

void BoundedTaskQueue::shutdown() {
  {
    std::lock_guard lock(mu_);
    if (shutting_down_ && threads_.empty()) return;
    shutting_down_ = true;
  }
  ready_.notify_all();
  room_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void BoundedTaskQueue::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mu_);
      ready_.wait(lock, [this] { return !tasks_.empty() || shutting_down_; });
      if (tasks_.empty()) return;  // shutting down and drained
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    room_.notify_one();
    task();
  }
}

}  // namespace ktune::service
