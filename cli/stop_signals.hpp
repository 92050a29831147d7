#pragma once
/// SIGINT and SIGTERM as a stop request for long work (`ktune tune`). While a StopSignals lives,
/// the first SIGINT or SIGTERM only sets a flag (the handler does nothing else that is not
/// async-signal-safe: an atomic store and one write(2) of a fixed line to stderr); the work polls
/// the flag, finishes what is running, commits, and the command exits 128 + the signal (130 for
/// SIGINT, 143 for SIGTERM), as shells and schedulers expect. The handlers are one-shot
/// (SA_RESETHAND): the same signal again takes its default action at once, and the worker dies
/// with its parent (harness::WorkerProcess).

#include <atomic>

namespace ktune::cli {

class StopSignals {
 public:
  /// Installs the handlers. One StopSignals at a time in a process (the flag is process-wide).
  StopSignals();
  /// Restores the previous dispositions.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  /// Set once a stop was requested; what the work polls.
  const std::atomic<bool>& flag() const;
  /// The first signal received (SIGINT, SIGTERM), 0 when none.
  int signal() const;
  /// 128 + signal(): the exit code of a command that stopped on it.
  int exit_code() const { return 128 + signal(); }
  /// "SIGINT" / "SIGTERM" ("" when none).
  const char* signal_name() const;
};

}  // namespace ktune::cli
