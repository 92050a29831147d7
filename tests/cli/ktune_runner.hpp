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

/// Path of the ktune binary under test.
std::string ktune_binary();

}  // namespace ktune::testing
