#pragma once
/// The events of running jobs, for `GET /v1/jobs/{id}/events` (Server-Sent Events): each job's
/// events are numbered from 0; a reader asks for those after the last it saw and waits for more.
/// Each job keeps its latest kMaxEventsPerJob events, and the events of at most kMaxJobs jobs are
/// kept, so memory stays bounded however long the server runs.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace ktune::service {

struct JobEvent {
  uint64_t seq = 0;
  std::string name;  ///< "progress", "key", "state"
  std::string data;  ///< one line of JSON
};

class JobEvents {
 public:
  static constexpr size_t kMaxEventsPerJob = 512;
  static constexpr size_t kMaxJobs = 64;

  void publish(int64_t job, std::string name, std::string data);
  /// The job published its last event.
  void close(int64_t job);
  /// Events of `job` numbered `next` or later (waiting up to `timeout` when there are none yet);
  /// `next` moves past them. `closed`: the job will publish nothing more (or is unknown here).
  std::vector<JobEvent> wait(int64_t job, uint64_t& next, std::chrono::milliseconds timeout, bool& closed);
  /// Wakes every reader for good (the server is stopping).
  void shutdown();
  /// Called (outside the lock) after every publish, close and shutdown: the HTTP daemon's wake-up
  /// of parked event streams. An empty function clears it.
  void set_listener(std::function<void()> listener);

 private:
  struct Stream {
    std::deque<JobEvent> events;
    uint64_t next_seq = 0;
    bool closed = false;
  };
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<int64_t, Stream> streams_;
  bool shutting_down_ = false;
  std::function<void()> listener_;  ///< guarded by mu_; copied out before it is called
  void notify();
};

}  // namespace ktune::service
