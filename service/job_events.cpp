#include "service/job_events.hpp"

namespace ktune::service {

void JobEvents::publish(int64_t job, std::string name, std::string data) {
  {
    std::lock_guard lock(mu_);
    if (streams_.size() >= kMaxJobs && streams_.find(job) == streams_.end()) {
      // Forget the oldest closed stream (ids grow, so the first closed one is the oldest).
      for (auto it = streams_.begin(); it != streams_.end(); ++it) {
        if (it->second.closed) {
          streams_.erase(it);
          break;
        }
      }
    }
    Stream& s = streams_[job];
    s.events.push_back({s.next_seq++, std::move(name), std::move(data)});
    if (s.events.size() > kMaxEventsPerJob) s.events.pop_front();
  }
  notify();
}

void JobEvents::close(int64_t job) {
  {
    std::lock_guard lock(mu_);
    streams_[job].closed = true;
  }
  notify();
}

std::vector<JobEvent> JobEvents::wait(int64_t job, uint64_t& next, std::chrono::milliseconds timeout,
                                      bool& closed) {
  std::unique_lock lock(mu_);
  const auto ready = [&] {
    if (shutting_down_) return true;
    const auto it = streams_.find(job);
    return it == streams_.end() || it->second.closed || it->second.next_seq > next;
  };
  changed_.wait_for(lock, timeout, ready);
  std::vector<JobEvent> out;
  const auto it = streams_.find(job);
  closed = shutting_down_ || it == streams_.end() || it->second.closed;
  if (it == streams_.end()) return out;
  for (const JobEvent& e : it->second.events) {
    if (e.seq >= next) out.push_back(e);
  }
  if (!out.empty()) next = out.back().seq + 1;
  // Closed, but events were still unread: report closed only once they are all read.
  if (closed && !out.empty() && !shutting_down_) closed = false;
  return out;
}

void JobEvents::shutdown() {
  {
    std::lock_guard lock(mu_);
    shutting_down_ = true;
  }
  notify();
}

void JobEvents::set_listener(std::function<void()> listener) {
  std::lock_guard lock(mu_);
  listener_ = std::move(listener);
}

void JobEvents::notify() {
  changed_.notify_all();
  std::function<void()> listener;
  {
    std::lock_guard lock(mu_);
    listener = listener_;
  }
  if (listener) listener();
}

}  // namespace ktune::service
