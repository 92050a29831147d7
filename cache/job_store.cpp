#include "cache/job_store.hpp"

#include "cache/detail/impl.hpp"
#include "cache/detail/sqlite_db.hpp"

namespace ktune::cache {
namespace {

using detail::StatementLease;

constexpr const char* kJobColumns =
    "id, state, lane, request_json, progress_json, error, created_at, started_at, finished_at";

JobRow read_job(const detail::Statement& s) {
  JobRow j;
  j.id = s.int64(0);
  j.state = s.text(1);
  j.lane = s.text(2);
  j.request_json = s.text(3);
  j.progress_json = s.text(4);
  j.error = s.text(5);
  j.created_at = s.text(6);
  if (!s.is_null(7)) j.started_at = s.text(7);
  if (!s.is_null(8)) j.finished_at = s.text(8);
  return j;
}

}  // namespace

JobStore::JobStore(const std::filesystem::path& path)
    : db_(std::make_unique<detail::Database>(path, detail::Database::Open::kReadWrite)) {
  db_->exec("PRAGMA busy_timeout = 10000");
}

JobStore::~JobStore() = default;

int64_t JobStore::add(std::string_view lane, std::string_view request_json) {
  std::lock_guard lock(mu_);
  StatementLease s =
      db_->cached("INSERT INTO jobs (state, lane, request_json, created_at) VALUES ('queued', ?1, ?2, ?3)");
  s->bind(1, lane).bind(2, request_json).bind(3, detail::now_iso()).run();
  return db_->last_insert_rowid();
}

std::optional<JobRow> JobStore::get(int64_t id) const {
  std::lock_guard lock(mu_);
  StatementLease s = db_->cached(std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = ?1");
  s->bind(1, id);
  if (!s->step()) return std::nullopt;
  return read_job(*s);
}

std::vector<JobRow> JobStore::list(size_t limit) const {
  std::lock_guard lock(mu_);
  StatementLease s =
      db_->cached(std::string("SELECT ") + kJobColumns + " FROM jobs ORDER BY id DESC LIMIT ?1");
  s->bind(1, static_cast<int64_t>(limit));
  std::vector<JobRow> out;
  while (s->step()) out.push_back(read_job(*s));
  return out;
}

std::optional<JobRow> JobStore::claim_next(std::string_view lane) {
  std::lock_guard lock(mu_);
  detail::Transaction tx(*db_);
  std::optional<JobRow> job;
  {
    StatementLease s = db_->cached(std::string("SELECT ") + kJobColumns +
                                   " FROM jobs WHERE state = 'queued' AND lane = ?1 ORDER BY id LIMIT 1");
    s->bind(1, lane);
    if (s->step()) job = read_job(*s);
  }
  if (!job) return std::nullopt;
  const std::string now = detail::now_iso();
  StatementLease u =
      db_->cached("UPDATE jobs SET state = 'running', started_at = coalesce(started_at, ?2) WHERE id = ?1");
  u->bind(1, job->id).bind(2, now).run();
  tx.commit();
  job->state = "running";
  if (!job->started_at) job->started_at = now;
  return job;
}

void JobStore::set_progress(int64_t id, std::string_view progress_json) {
  std::lock_guard lock(mu_);
  StatementLease s = db_->cached("UPDATE jobs SET progress_json = ?2 WHERE id = ?1");
  s->bind(1, id).bind(2, progress_json).run();
}

void JobStore::finish(int64_t id, std::string_view state, std::string_view error,
                      std::string_view progress_json) {
  std::lock_guard lock(mu_);
  StatementLease s = db_->cached(
      "UPDATE jobs SET state = ?2, error = ?3, progress_json = ?4, finished_at = ?5 WHERE id = ?1");
  s->bind(1, id).bind(2, state).bind(3, error).bind(4, progress_json).bind(5, detail::now_iso()).run();
}

bool JobStore::cancel_queued(int64_t id) {
  std::lock_guard lock(mu_);
  StatementLease s =
      db_->cached("UPDATE jobs SET state = 'cancelled', finished_at = ?2 WHERE id = ?1 AND state = 'queued'");
  s->bind(1, id).bind(2, detail::now_iso()).run();
  return db_->changes() > 0;
}

int JobStore::requeue_running() {
  std::lock_guard lock(mu_);
  StatementLease s = db_->cached("UPDATE jobs SET state = 'queued' WHERE state = 'running'");
  s->run();
  return db_->changes();
}

std::map<std::string, int64_t> JobStore::count_by_state() const {
  std::lock_guard lock(mu_);
  std::map<std::string, int64_t> out{
      {"queued", 0}, {"running", 0}, {"done", 0}, {"failed", 0}, {"cancelled", 0}};
  StatementLease s = db_->cached("SELECT state, count(*) FROM jobs GROUP BY state");
  while (s->step()) out[s->text(0)] = s->int64(1);
  return out;
}

}  // namespace ktune::cache
