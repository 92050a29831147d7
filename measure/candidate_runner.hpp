#pragma once
/// The parent side of worker isolation (docs/design.md D5) and the API the tuner and `ktune bench` call:
/// give it a CandidateRequest (compiled cubin + lowered name + launch geometry + buffers/args +
/// reference + checks + timing options), get a CandidateResult back — always, whatever the
/// candidate does:
///   - the worker answers           -> its result (ok, incorrect, launch_error, exceeds_limits, ...)
///   - no answer within the timeout -> `timeout`; the worker is killed
///   - the worker dies              -> `crashed`, with the signal or exit status and its stderr tail
///   - the worker sends garbage     -> `launch_error` with "worker protocol error: ..."; killed
/// After any of the last three the next candidate gets a fresh worker. Only a worker that cannot
/// start at all (no GPU, no driver: its hello says why) makes run() throw.

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/candidate.hpp"
#include "measure/worker_process.hpp"

namespace ktune::measure {

struct RunnerOptions {
  /// The worker's command line, without "--fd N". Default: default_worker_command().
  std::vector<std::string> worker_command;
  /// How long a new worker may take to say hello (cuInit ~0.2 s + context ~0.12 s on the H200;
  /// a cold driver load on a busy host can take seconds).
  double start_timeout_ms = 60000;
  /// Give up (throw) after this many workers in a row die before their hello.
  int max_start_failures = 3;
  /// A stop request (set by a signal handler, say; may be null). Once set, the running candidate
  /// still gets its answer, but waits at most `stop_grace_ms` more; then its worker is killed and
  /// the result comes back with `interrupted` set (not the candidate's fault: callers do not store
  /// it). The flag does not stop run() from starting a candidate: not proposing one is the caller's.
  const std::atomic<bool>* stop = nullptr;
  /// 10 s: a candidate's measurement takes well under a second (docs/perf/measurement.md), and
  /// schedulers allow 30 s between SIGTERM and SIGKILL (Slurm's KillWait, Kubernetes'
  /// terminationGracePeriodSeconds), which leaves time to commit and print how to resume.
  double stop_grace_ms = 10000;
};

/// {$KTUNE_WORKER_BIN or $KTUNE_BIN or /proc/self/exe, "worker"}.
std::vector<std::string> default_worker_command();

class CandidateRunner {
 public:
  explicit CandidateRunner(RunnerOptions options = {});
  ~CandidateRunner();
  CandidateRunner(const CandidateRunner&) = delete;
  CandidateRunner& operator=(const CandidateRunner&) = delete;

  /// Measures one candidate in the worker (starting one when needed). See the file comment.
  CandidateResult run(const CandidateRequest& request);

  /// Workers started so far (1 after the first run; +1 for every respawn).
  int workers_started() const { return workers_started_; }
  /// The current worker's pid (0 when none).
  int worker_pid() const;
  /// The device description from the latest worker's hello ({} before the first run).
  const nlohmann::json& device() const { return device_; }
  /// Stops the current worker politely (kShutdown, then SIGKILL after a grace period).
  void shutdown() noexcept;

 private:
  void ensure_worker();
  CandidateResult failed(const CandidateRequest& request, Outcome outcome, std::string reason) const;
  /// The worker's answer within `timeout_ms`, or kTimeout with `interrupted` set once the stop
  /// request's grace has run out.
  WorkerProcess::Received receive_result(double timeout_ms, bool& interrupted);

  RunnerOptions options_;
  std::unique_ptr<WorkerProcess> worker_;
  nlohmann::json device_ = nlohmann::json::object();
  int workers_started_ = 0;
};

}  // namespace ktune::measure
