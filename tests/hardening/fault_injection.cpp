#include "tests/hardening/fault_injection.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

#include "tests/cli/test_db_fixture.hpp"

namespace ktune::hardening {
namespace {

int wait_status(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

pid_t start_child(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int code = 99;
    try {
      code = body();
    } catch (...) {
    }
    ::_exit(code);
  }
  return pid;
}

int wait_child(pid_t pid) { return wait_status(pid); }

testing::RunResult run_ktune_with_fault(const std::vector<std::string>& args,
                                        const std::function<bool()>& inject) {
  testing::TempDir tmp;
  const auto out_path = tmp / "stdout";
  const auto err_path = tmp / "stderr";
  const std::string binary = testing::ktune_binary();
  std::vector<char*> argv{const_cast<char*>(binary.c_str())};
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
    if (!inject()) ::_exit(kCannotInject);
    ::execv(binary.c_str(), argv.data());  // rlimits, ignored signals and mounts survive exec
    ::_exit(127);
  }
  testing::RunResult r;
  r.exit_code = wait_status(pid);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

bool limit_file_size(uint64_t bytes) {
  if (std::signal(SIGXFSZ, SIG_IGN) == SIG_ERR) return false;
  const rlimit limit{static_cast<rlim_t>(bytes), static_cast<rlim_t>(bytes)};
  return ::setrlimit(RLIMIT_FSIZE, &limit) == 0;
}

bool read_only_bind(const std::filesystem::path& dir) {
  if (::unshare(CLONE_NEWNS) != 0) return false;
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return false;
  if (::mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0) return false;
  if (::mount(nullptr, dir.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0) return false;
  // Proof that it took: creating a file there must fail with EROFS.
  const auto probe = dir / ".ktune-ro-probe";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT, 0600);
  if (fd >= 0) {
    ::close(fd);
    return false;
  }
  return errno == EROFS;
}

WriteLockHolder::WriteLockHolder(const std::filesystem::path& path) {
  int ready[2];
  int release[2];
  if (::pipe(ready) != 0 || ::pipe(release) != 0) throw std::runtime_error("pipe failed");
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::close(ready[0]);
    ::close(release[1]);
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) ::_exit(2);
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) ::_exit(3);
    const char byte = 1;
    if (::write(ready[1], &byte, 1) != 1) ::_exit(4);
    char got = 0;
    (void)::read(release[0], &got, 1);  // returns at release() or when the test process dies
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    ::_exit(0);
  }
  ::close(ready[1]);
  ::close(release[0]);
  release_fd_ = release[1];
  char byte = 0;
  const ssize_t n = ::read(ready[0], &byte, 1);
  ::close(ready[0]);
  if (n != 1) {
    ::close(release_fd_);
    release_fd_ = -1;
    const int status = wait_status(pid_);
    pid_ = -1;
    throw std::runtime_error(
        fmt::format("the lock holder could not lock {} (status {})", path.string(), status));
  }
}

int WriteLockHolder::release() {
  if (pid_ < 0) return 0;
  ::close(release_fd_);
  release_fd_ = -1;
  const int status = wait_status(pid_);
  pid_ = -1;
  return status;
}

WriteLockHolder::~WriteLockHolder() {
  try {
    release();
  } catch (...) {
  }
}

uint64_t largest_file_size(const std::filesystem::path& db) {
  uint64_t largest = 0;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::filesystem::path p = db;
    p += suffix;
    std::error_code ec;
    const auto size = std::filesystem::file_size(p, ec);
    if (!ec && size > largest) largest = size;
  }
  return largest;
}

std::string fingerprint(const std::filesystem::path& file) {
  const std::string bytes = slurp(file);
  uint64_t h = 1469598103934665603ULL;
  for (const unsigned char c : bytes) h = (h ^ c) * 1099511628211ULL;
  return fmt::format("{} bytes, fnv1a {:016x}", bytes.size(), h);
}

}  // namespace ktune::hardening
