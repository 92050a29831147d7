#pragma once
/// One `ktune worker` child process seen from the parent (docs/design.md D5): spawned with a socket pair
/// as its protocol channel (fd 3 in the child) and its stdout/stderr captured (the last few KiB are
/// kept for crash reasons). receive() waits with a deadline; kill() is SIGKILL plus reaping.
/// Never throws from the destructor: a live child is killed and reaped.
///
/// No worker outlives its parent: the child is started with PR_SET_PDEATHSIG = SIGKILL (checked
/// against a parent that died before it was set), so a parent killed by any signal, SIGKILL
/// included, takes its worker with it. The death signal follows the thread that spawned the worker,
/// so spawn from a thread that lives as long as the worker is used (the tuner and `ktune bench`
/// spawn from the main thread). The worker ignores SIGINT and SIGTERM: the parent decides what a
/// stop does to the running candidate (harness::RunnerOptions::stop).

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/worker_protocol.hpp"

namespace ktune::measure {

class WorkerProcess {
 public:
  /// The child's protocol file descriptor (passed as `--fd 3`).
  static constexpr int kChildFd = 3;
  /// Bytes of the child's stderr kept for reasons.
  static constexpr std::size_t kStderrTailBytes = 4096;

  /// Starts `argv` (argv[0] a path) with "--fd 3" appended. Throws ktune::Error(kRuntime) when the
  /// program cannot be started (the message names it and errno).
  static std::unique_ptr<WorkerProcess> spawn(const std::vector<std::string>& argv);

  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;
  ~WorkerProcess();

  /// Sends one message. Throws ktune::Error(kRuntime) when the child is gone (EPIPE).
  void send(const Message& message);

  enum class Status { kMessage, kExited, kTimeout, kProtocolError };
  struct Received {
    Status status = Status::kTimeout;
    Message message;    ///< for kMessage
    std::string error;  ///< for kProtocolError: what was wrong
  };
  /// Waits up to `timeout_ms` for one whole message. kExited: the child closed the channel (it died
  /// or exited; it is reaped and exit_description() says how). Drains the child's stderr meanwhile.
  Received receive(double timeout_ms);

  /// SIGKILL and reap (no-op when already reaped).
  void kill() noexcept;
  /// Reaps the child if it has exited, without blocking; true when it is gone.
  bool exited() noexcept;

  pid_t pid() const { return pid_; }
  /// "exited with status 3", "killed by signal 11 (SIGSEGV)", "running".
  std::string exit_description() const;
  /// The last kStderrTailBytes of the child's stdout+stderr.
  std::string stderr_tail() const { return stderr_tail_; }

 private:
  WorkerProcess() = default;
  void drain_stderr() noexcept;
  void reap(bool block) noexcept;

  pid_t pid_ = -1;
  int channel_ = -1;  ///< parent end of the socket pair
  int stderr_ = -1;   ///< read end of the child's stdout/stderr pipe
  std::optional<int> wait_status_;
  FrameDecoder decoder_;
  std::string stderr_tail_;
};

}  // namespace ktune::measure
