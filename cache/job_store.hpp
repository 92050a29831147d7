#pragma once
/// The `jobs` table (schema v2, docs/schema.md): the tuning jobs `ktune serve` was asked to run, so a
/// server killed in the middle of one finds it again on restart. A JobStore is its own connection to
/// the database (WAL; open the file with ConfigCache first so that it exists and is migrated); its
/// calls are serialized and each is one statement or one transaction. Values travel as bound
/// parameters only.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ktune::cache {

namespace detail {
class Database;
}

/// One job as stored.
struct JobRow {
  int64_t id = 0;
  std::string state;  ///< queued, running, done, failed, cancelled
  std::string lane;   ///< what runs it: "device:0", or "compile:sm_90" for compile-only jobs
  std::string request_json;
  std::string progress_json = "{}";  ///< counts, winners so far, as the runner last wrote them
  std::string error;                 ///< why it failed ("" otherwise)
  std::string created_at;            ///< ISO-8601 UTC
  std::optional<std::string> started_at;
  std::optional<std::string> finished_at;
};

class JobStore {
 public:
  /// Opens a connection to the existing, migrated database at `path` (ConfigCache::open made it).
  explicit JobStore(const std::filesystem::path& path);
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  /// A new queued job; returns its id.
  int64_t add(std::string_view lane, std::string_view request_json);
  std::optional<JobRow> get(int64_t id) const;
  /// The newest `limit` jobs, newest first.
  std::vector<JobRow> list(size_t limit) const;
  /// The oldest queued job of `lane`, now marked running (started_at set); nullopt when none.
  std::optional<JobRow> claim_next(std::string_view lane);
  void set_progress(int64_t id, std::string_view progress_json);
  /// Ends a job: `state` is done, failed or cancelled.
  void finish(int64_t id, std::string_view state, std::string_view error, std::string_view progress_json);
  /// A queued job becomes cancelled; false when it is not queued (running jobs stop through their runner).
  bool cancel_queued(int64_t id);
  /// Running jobs (a server that stopped or died while they ran) become queued again; returns how many.
  int requeue_running();
  /// Jobs per state.
  std::map<std::string, int64_t> count_by_state() const;

 private:
  mutable std::mutex mu_;
  std::unique_ptr<detail::Database> db_;
};

}  // namespace ktune::cache
