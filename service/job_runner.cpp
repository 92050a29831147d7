#include "service/job_runner.hpp"

#include <unistd.h>

#include <chrono>
#include <ostream>

#include <fmt/format.h>

#include "ktune/error.hpp"
#include "service/api_error.hpp"
#include "service/job_request.hpp"
#include "tuner/loop/progress.hpp"
#include "tuner/loop/tuning_session.hpp"

namespace ktune::service {
namespace {

/// How often the monitor publishes progress, and how often it stores it in the job's row.
constexpr auto kProgressInterval = std::chrono::milliseconds(500);
constexpr int kStoreEveryTicks = 10;  // 5 s: a killed server loses at most that much of the count

std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace

/// A running job's state, shared by its lane thread, the monitor and the routes.
struct JobRunner::Live {
  explicit Live(int64_t job_id) : id(job_id), sink(nullptr), progress(sink, /*enabled=*/true) {}
  int64_t id;
  std::ostream sink;  ///< no buffer: the progress line is drawn nowhere, only counted
  tuner::Progress progress;
  std::atomic<bool> stop{false};
  std::atomic<bool> cancelled{false};
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  mutable std::mutex mu;
  std::map<std::string, size_t> outcomes;
  nlohmann::json winners = nlohmann::json::array();
  size_t keys_done = 0;
  size_t keys_total = 0;
  std::string last_published;

  nlohmann::json progress_json() const {
    const size_t done = progress.done();
    const size_t total = progress.total();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    nlohmann::json eta = nullptr;
    if (done > 0 && total >= done)
      eta = elapsed * static_cast<double>(total - done) / static_cast<double>(done);
    std::lock_guard lock(mu);
    return {{"evaluations", done},    {"evaluations_planned", total}, {"eta_s", eta},
            {"keys_done", keys_done}, {"keys_total", keys_total},     {"outcomes", outcomes},
            {"winners", winners}};
  }
};

JobRunner::JobRunner(const std::filesystem::path& db_path, cache::ConfigCache& writer,
                     std::vector<int> devices)
    : db_path_(db_path), writer_(writer), devices_(std::move(devices)), store_(db_path) {
  monitor_ = std::thread([this] { monitor(); });
}

JobRunner::~JobRunner() { stop(); }

void JobRunner::resume_interrupted() {
  store_.requeue_running();
  for (const auto& row : store_.list(100000)) {
    if (row.state != "queued") continue;
    events_.publish(row.id, "state", dump({{"id", row.id}, {"state", "queued"}}));
    ensure_lane(row.lane);
  }
}

void JobRunner::ensure_lane(const std::string& lane) {
  std::vector<std::thread> ended;
  {
    std::lock_guard lock(mu_);
    ended.swap(ended_lanes_);
    if (!stopping_ && lanes_.find(lane) == lanes_.end())
      lanes_.emplace(lane, std::thread([this, lane] { run_lane(lane); }));
    wake_.notify_all();
  }
  for (std::thread& t : ended) t.join();  // lanes that ran out of jobs: their threads have returned
}

nlohmann::json JobRunner::submit(const nlohmann::json& body) {
  const JobRequest request = parse_job_request(body, devices_);
  // Plan now, so a job that cannot run (unknown kernel, shape, dtype, preset) is refused at once,
  // and one whose few bytes expand to more keys than a job may hold is refused before it is stored.
  tuner::TuneOptions options;
  std::size_t keys = 0;
  for (const tuner::SessionJob& j : tuner::plan_session(request.session, options)) keys += j.keys.size();
  if (keys > kMaxJobKeys) {
    bad_request(fmt::format("the job plans {} keys; a job may plan at most {} (split it into several jobs)",
                            keys, kMaxJobKeys));
  }
  {
    std::lock_guard lock(mu_);
    if (stopping_) throw ApiError(503, "unavailable", "the server is stopping");
  }
  const int64_t id = store_.add(request.lane(), dump(body));
  events_.publish(id, "state", dump({{"id", id}, {"state", "queued"}}));
  nlohmann::json answer = view(id);  // before the lane may start it: the answer says "queued"
  ensure_lane(request.lane());
  return answer;
}

nlohmann::json JobRunner::view_of(const cache::JobRow& row) const {
  nlohmann::json request = nlohmann::json::parse(row.request_json, nullptr, false);
  nlohmann::json progress = nlohmann::json::parse(row.progress_json, nullptr, false);
  {
    std::lock_guard lock(mu_);
    if (const auto it = live_.find(row.id); it != live_.end()) progress = it->second->progress_json();
  }
  nlohmann::json v = {{"id", row.id},
                      {"state", row.state},
                      {"lane", row.lane},
                      {"request", request.is_discarded() ? nlohmann::json(row.request_json) : request},
                      {"progress", progress.is_discarded() ? nlohmann::json::object() : progress},
                      {"error", row.error},
                      {"created_at", row.created_at},
                      {"started_at", row.started_at ? nlohmann::json(*row.started_at) : nlohmann::json()},
                      {"finished_at", row.finished_at ? nlohmann::json(*row.finished_at) : nlohmann::json()}};
  return v;
}

nlohmann::json JobRunner::view(int64_t id) const {
  const auto row = store_.get(id);
  if (!row) throw ApiError(404, "not_found", fmt::format("no job {}", id));
  return view_of(*row);
}

nlohmann::json JobRunner::list(size_t limit) const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& row : store_.list(limit)) out.push_back(view_of(row));
  return out;
}

nlohmann::json JobRunner::cancel(int64_t id) {
  const auto row = store_.get(id);
  if (!row) throw ApiError(404, "not_found", fmt::format("no job {}", id));
  if (row->state == "done" || row->state == "failed" || row->state == "cancelled")
    throw ApiError(409, "conflict", fmt::format("job {} already ended ({})", id, row->state));
  if (store_.cancel_queued(id)) {
    events_.publish(id, "state", dump({{"id", id}, {"state", "cancelled"}}));
    events_.close(id);
    return view(id);
  }
  bool stopping_live = false;
  {
    std::lock_guard lock(mu_);
    if (const auto it = live_.find(id); it != live_.end()) {
      it->second->cancelled = true;
      it->second->stop = true;
      stopping_live = true;
    }
  }
  if (stopping_live) return view(id);  // still running until its candidate ends; the state event says when
  const auto now = store_.get(id);
  if (now && now->state == "running") {
    // Claimed by its lane a moment ago but not yet live: ask again (409 tells the client to retry).
    throw ApiError(409, "conflict", fmt::format("job {} is starting; cancel it again", id));
  }
  throw ApiError(409, "conflict",
                 fmt::format("job {} already ended ({})", id, now ? now->state : row->state));
}

void JobRunner::run_lane(const std::string& lane) {
  for (;;) {
    std::optional<cache::JobRow> row;
    {
      std::unique_lock lock(mu_);
      if (stopping_) return;
    }
    try {
      row = store_.claim_next(lane);
    } catch (const std::exception& e) {
      fmt::print(stderr, "ktune serve: cannot read the job queue: {}\n", e.what());
    }
    if (row) {
      run_job(*row);
      continue;
    }
    // Nothing queued: the lane ends, so idle lanes hold no thread. Asking once more under the lock
    // closes the race with submit(), which stores the job before it calls ensure_lane(): a job
    // stored before this point is claimed here, one stored after finds the lane gone and starts it.
    std::unique_lock lock(mu_);
    if (stopping_) return;
    try {
      row = store_.claim_next(lane);
    } catch (const std::exception& e) {
      fmt::print(stderr, "ktune serve: cannot read the job queue: {}\n", e.what());
      wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; });
      continue;
    }
    if (row) {
      lock.unlock();
      run_job(*row);
      continue;
    }
    const auto self = lanes_.find(lane);
    ended_lanes_.push_back(std::move(self->second));
    lanes_.erase(self);
    return;
  }
}

void JobRunner::run_job(const cache::JobRow& row) {
  auto live = std::make_shared<Live>(row.id);
  {
    std::lock_guard lock(mu_);
    live_[row.id] = live;
    if (stopping_) live->stop = true;
  }
  events_.publish(row.id, "state", dump({{"id", row.id}, {"state", "running"}}));
  std::string state = "done";
  std::string error;
  bool requeue = false;
  try {
    const JobRequest request = parse_job_request(nlohmann::json::parse(row.request_json), devices_);
    tuner::TuneOptions options;
    options.compile_threads = request.compile_only ? 1 : 0;
    std::vector<tuner::SessionJob> jobs = tuner::plan_session(request.session, options);
    tuner::SessionTarget target;
    if (request.compile_only) {
      options.compile_only = true;
      target = tuner::compile_only_target(request.arch, options);
    } else {
      options.device = request.device;
      target = tuner::device_target(options);
    }
    live->progress.begin(tuner::planned_evaluations(jobs, options));
    {
      std::lock_guard lock(live->mu);
      live->keys_total = tuner::key_count(jobs);
    }
    cache::RunInfo run;
    run.host = host_name();
    run.ktune_version = KTUNE_VERSION_STRING;
    run.arguments = fmt::format("serve job {} {}", row.id, row.request_json);
    run.driver_version = target.driver_version;
    tuner::SessionHooks hooks;
    hooks.progress = &live->progress;
    hooks.stop = &live->stop;
    hooks.on_key = [this, live](const tuner::KeySummary& s) {
      {
        std::lock_guard lock(live->mu);
        for (const auto& [outcome, n] : s.outcomes) live->outcomes[outcome] += n;
        if (!s.stopped) ++live->keys_done;
        if (s.winner) {
          live->winners.push_back({{"kernel", s.kernel},
                                   {"shape", s.shape},
                                   {"dtype", to_string(s.dtype)},
                                   {"layout", s.layout},
                                   {"config_name", *s.winner},
                                   {"median_us", s.winner_median_us}});
        }
      }
      {
        std::lock_guard lock(mu_);
        for (const auto& [outcome, n] : s.outcomes) candidates_[outcome] += n;
      }
      events_.publish(live->id, "key", dump(tuner::summary_json(s)));
    };
    const tuner::SessionResult result = tuner::run_session(writer_, target, run, jobs, options, hooks);
    if (result.stopped) {
      if (live->cancelled) {
        state = "cancelled";
      } else {
        requeue = true;  // the server is stopping: a restart resumes the job
      }
    } else if (const size_t failed = result.failed(); failed > 0) {
      state = "failed";
      error = fmt::format("{} of {} key(s) could not be tuned", failed, result.keys.size());
    }
  } catch (const std::exception& e) {
    state = "failed";
    error = e.what();
  }
  const std::string progress = dump(live->progress_json());
  try {
    if (requeue) {
      store_.set_progress(row.id, progress);
    } else {
      store_.finish(row.id, state, error, progress);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "ktune serve: cannot store the end of job {}: {}\n", row.id, e.what());
  }
  events_.publish(row.id, "progress", progress);
  events_.publish(row.id, "state",
                  dump({{"id", row.id}, {"state", requeue ? "queued" : state}, {"error", error}}));
  events_.close(row.id);
  std::lock_guard lock(mu_);
  live_.erase(row.id);
}

void JobRunner::monitor() {
  int tick = 0;
  for (;;) {
    std::vector<std::shared_ptr<Live>> running;
    {
      std::unique_lock lock(mu_);
      if (wake_.wait_for(lock, kProgressInterval, [this] { return stopping_; })) return;
      for (const auto& [id, live] : live_) running.push_back(live);
    }
    ++tick;
    for (const auto& live : running) {
      const std::string progress = dump(live->progress_json());
      if (progress != live->last_published) {
        events_.publish(live->id, "progress", progress);
        live->last_published = progress;
      }
      if (tick % kStoreEveryTicks == 0) {
        try {
          store_.set_progress(live->id, progress);
        } catch (const std::exception&) {
          // The database is busy; the next tick stores it.
        }
      }
    }
  }
}

void JobRunner::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && lanes_.empty() && !monitor_.joinable()) return;
    stopping_ = true;
    for (auto& [id, live] : live_) live->stop = true;
  }
  wake_.notify_all();
  // Lanes no longer change once stopping_ is set (a lane only leaves lanes_ when not stopping).
  for (auto& [lane, thread] : lanes_) {
    if (thread.joinable()) thread.join();
  }
  lanes_.clear();
  for (std::thread& t : ended_lanes_) {
    if (t.joinable()) t.join();
  }
  ended_lanes_.clear();
  if (monitor_.joinable()) monitor_.join();
  events_.shutdown();
  try {
    store_.requeue_running();
  } catch (const std::exception& e) {
    fmt::print(stderr, "ktune serve: cannot requeue the running jobs: {}\n", e.what());
  }
}

std::string JobRunner::metrics_text() const {
  std::string out =
      "# HELP ktune_jobs Tuning jobs by state.\n"
      "# TYPE ktune_jobs gauge\n";
  for (const auto& [state, n] : store_.count_by_state())
    out += fmt::format("ktune_jobs{{state=\"{}\"}} {}\n", state, n);
  out +=
      "# HELP ktune_candidates_total Candidates evaluated by this server's jobs, by outcome.\n"
      "# TYPE ktune_candidates_total counter\n";
  std::lock_guard lock(mu_);
  for (const auto& [outcome, n] : candidates_)
    out += fmt::format("ktune_candidates_total{{outcome=\"{}\"}} {}\n", outcome, n);
  return out;
}

}  // namespace ktune::service
