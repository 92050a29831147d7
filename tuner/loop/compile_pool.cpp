#include "tuner/loop/compile_pool.hpp"

#include <algorithm>

namespace ktune::tuner {

CompilePool::CompilePool(std::size_t threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  workers_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

CompilePool::~CompilePool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    jobs_.clear();  // their futures report broken_promise
  }
  ready_.notify_all();
  for (auto& t : workers_) t.join();
}

void CompilePool::enqueue(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  ready_.notify_one();
}

void CompilePool::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();  // a packaged_task: exceptions land in its future
  }
}

}  // namespace ktune::tuner
