#pragma once
/// SIGINT and SIGTERM as a stop request for long work (`ktune tune`, `ktune serve`). While a
/// StopSignals lives, the first SIGINT or SIGTERM only sets a flag (and writes one fixed line to
/// stderr); the work polls the flag, finishes what is running, commits, and the command exits 128 +
/// the signal (130 for SIGINT, 143 for SIGTERM), as shells and schedulers expect. The same signal
/// again takes its default action at once, and the worker dies with its parent
/// (measure::WorkerProcess). Both signals are blocked in the thread that makes the StopSignals and
/// so in every thread it starts afterwards (make it first), and a thread of its own takes them with
/// sigtimedwait: no signal handler runs, so none a library installs meanwhile can take over (NVRTC
/// sets one while it compiles that exits with status 4). A one-shot handler stays installed for
/// threads started before.

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
