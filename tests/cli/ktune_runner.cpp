#include "tests/cli/ktune_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "tests/cli/test_db_fixture.hpp"

namespace ktune::testing {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string ktune_binary() {
  const char* env = std::getenv("KTUNE_BIN");
  return env != nullptr && *env != '\0' ? env : KTUNE_CLI_PATH;
}

namespace {

/// Starts the ktune binary with `args`, its stdout and stderr into the two files.
pid_t start(const std::vector<std::string>& args, const std::vector<std::pair<std::string, std::string>>& env,
            const std::filesystem::path& out_path, const std::filesystem::path& err_path) {
  const std::string binary = ktune_binary();

  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int out_fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out_fd < 0 || err_fd < 0) ::_exit(127);
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    for (const auto& [name, value] : env) {
      if (value.empty()) {
        ::unsetenv(name.c_str());
      } else {
        ::setenv(name.c_str(), value.c_str(), 1);
      }
    }
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

int exit_code_of(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

RunResult run_ktune(const std::vector<std::string>& args,
                    const std::vector<std::pair<std::string, std::string>>& env) {
  TempDir tmp;
  const auto out_path = tmp / "stdout";
  const auto err_path = tmp / "stderr";
  const pid_t pid = start(args, env, out_path, err_path);
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) throw std::runtime_error("waitpid failed");

  RunResult r;
  r.exit_code = exit_code_of(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

KtuneProcess::KtuneProcess(const std::vector<std::string>& args,
                           const std::vector<std::pair<std::string, std::string>>& env) {
  static int counter = 0;
  dir_ = (std::filesystem::temp_directory_path() /
          ("ktune_process_" + std::to_string(::getpid()) + "_" + std::to_string(counter++)))
             .string();
  std::filesystem::create_directories(dir_);
  pid_ = start(args, env, std::filesystem::path(dir_) / "stdout", std::filesystem::path(dir_) / "stderr");
}

KtuneProcess::~KtuneProcess() {
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void KtuneProcess::signal(int sig) const { ::kill(pid_, sig); }

bool KtuneProcess::exited() {
  if (reaped_) return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    status_ = status;
    reaped_ = true;
  }
  return reaped_;
}

RunResult KtuneProcess::wait() {
  if (!reaped_) {
    int status = 0;
    if (::waitpid(pid_, &status, 0) != pid_) throw std::runtime_error("waitpid failed");
    status_ = status;
    reaped_ = true;
  }
  RunResult r;
  r.exit_code = exit_code_of(status_);
  r.out = slurp(std::filesystem::path(dir_) / "stdout");
  r.err = slurp(std::filesystem::path(dir_) / "stderr");
  return r;
}

std::string KtuneProcess::err_so_far() const { return slurp(std::filesystem::path(dir_) / "stderr"); }

}  // namespace ktune::testing
