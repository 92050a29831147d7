#pragma once
// Runs the built `ktune` binary as a child process and captures its exit code, stdout and
// stderr separately (the tests check which stream each output goes to).

#include <string>
#include <utility>
#include <vector>

namespace ktune::testing {

struct RunResult {
  int exit_code = -1;  ///< the exit status; 128 + signal when killed by one
  std::string out;
  std::string err;
};

/// Runs the ktune binary with `args`; `env` entries are set (value) or, with an empty value,
/// unset in the child only.
RunResult run_ktune(const std::vector<std::string>& args,
                    const std::vector<std::pair<std::string, std::string>>& env = {});

/// A ktune child started in the background (to signal it mid-way); its output goes to files until
/// wait() collects it. The destructor SIGKILLs and reaps a child still running.
class KtuneProcess {
 public:
  KtuneProcess(const std::vector<std::string>& args,
               const std::vector<std::pair<std::string, std::string>>& env = {});
  ~KtuneProcess();
  KtuneProcess(const KtuneProcess&) = delete;
  KtuneProcess& operator=(const KtuneProcess&) = delete;

  int pid() const { return pid_; }
  /// Sends `sig` to the child.
  void signal(int sig) const;
  /// Whether the child has exited (reaps it when it has; wait() then returns at once).
  bool exited();
  /// Waits for the child and returns its exit code and output.
  RunResult wait();
  /// Stderr so far.
  std::string err_so_far() const;

 private:
  int pid_ = -1;
  int status_ = -1;
  bool reaped_ = false;
  std::string dir_;
};

/// Path of the ktune binary under test: $KTUNE_BIN (a binary carried to the GPU machine), else
/// this build's.
std::string ktune_binary();

}  // namespace ktune::testing
