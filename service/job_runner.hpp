#pragma once
/// Runs the service's tuning jobs (docs/service.md "Jobs"). A job is a row of the database's `jobs`
/// table (cache/job_store.hpp) before it is anything else, so a server killed in the middle of one
/// finds it on restart and runs it again through the sweep's resume path (what was committed is
/// answered from the cache, not measured again). One thread a lane runs that lane's jobs one after
/// the other: a lane is one GPU ("device:0"), or one compile-only target ("compile:sm_90"), so two
/// jobs for the same GPU never overlap. A lane's thread ends when its queue is empty (the next job
/// of the lane starts it again), so idle lanes cost no thread; a job may plan kMaxJobKeys keys. A monitor
/// thread publishes progress events and stores the progress in the job's row.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "cache/job_store.hpp"
#include "service/job_events.hpp"

namespace ktune::service {

class JobRunner {
 public:
  /// The most keys one job may plan (a few bytes of shapes times dtypes can name millions).
  static constexpr std::size_t kMaxJobKeys = 4096;

  /// @param writer  the server's one writing handle (jobs record into it)
  /// @param devices GPU ordinals measuring jobs may use (empty: compile-only jobs only)
  JobRunner(const std::filesystem::path& db_path, cache::ConfigCache& writer, std::vector<int> devices);
  /// stop() when not done yet.
  ~JobRunner();
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  /// Jobs left running by a server that stopped or died are queued again and started.
  void resume_interrupted();
  /// Checks `body` (ApiError 400/503), stores it as a queued job and wakes its lane; the job's view.
  nlohmann::json submit(const nlohmann::json& body);
  /// The job's view (state, counts per outcome, evaluations, ETA, winners so far); ApiError 404.
  nlohmann::json view(int64_t id) const;
  /// The newest `limit` jobs' views.
  nlohmann::json list(size_t limit) const;
  /// Cancels a queued or running job (a running one stops after its running candidate; what was
  /// measured stays). ApiError 404 for an unknown job, 409 for one that already ended.
  nlohmann::json cancel(int64_t id);
  /// Graceful stop: running jobs stop after their running candidate, commit, and go back to queued
  /// (a restart resumes them); the threads end. Idempotent.
  void stop();

  JobEvents& events() { return events_; }
  const std::vector<int>& devices() const { return devices_; }
  /// Prometheus lines: jobs by state, candidates by outcome.
  std::string metrics_text() const;

 private:
  struct Live;
  void ensure_lane(const std::string& lane);
  void run_lane(const std::string& lane);
  void run_job(const cache::JobRow& row);
  void monitor();
  nlohmann::json view_of(const cache::JobRow& row) const;

  std::filesystem::path db_path_;
  cache::ConfigCache& writer_;
  std::vector<int> devices_;
  cache::JobStore store_;
  JobEvents events_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<std::string, std::thread> lanes_;
  std::vector<std::thread> ended_lanes_;  ///< lanes whose queue ran empty, joined by the next ensure_lane
  std::map<int64_t, std::shared_ptr<Live>> live_;  ///< running jobs
  std::map<std::string, uint64_t> candidates_;     ///< outcome -> evaluations, all jobs of this process
  std::thread monitor_;
};

}  // namespace ktune::service
