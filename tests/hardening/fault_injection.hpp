#pragma once
// Faults a database meets in the field, made in a child process so the test process is untouched:
// a full disk (RLIMIT_FSIZE with SIGXFSZ ignored: a write past the limit fails with EFBIG, as a
// full disk fails with ENOSPC), a file the process cannot write (a read-only bind mount in a private
// mount namespace: CI runs as root, so file modes would not stop it), and another process that holds
// the database's write lock for longer than ktune's busy timeout.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tests/cli/ktune_runner.hpp"

namespace ktune::hardening {

/// Exit status of a child whose fault could not be set up here (e.g. no mount namespaces).
inline constexpr int kCannotInject = 125;

/// Forks a child that runs `body` and exits with what it returns (99 when it throws).
pid_t start_child(const std::function<int()>& body);
/// Waits for a child of start_child(); its exit status (128 + signal when killed).
int wait_child(pid_t pid);
/// start_child() then wait_child().
inline int in_child(const std::function<int()>& body) { return wait_child(start_child(body)); }

/// Runs the ktune binary with `args` in a child after `inject` ran there; `inject` returns false
/// when it cannot make the fault, and the result's exit_code is then kCannotInject.
testing::RunResult run_ktune_with_fault(const std::vector<std::string>& args,
                                        const std::function<bool()>& inject);

/// In this process (a child): files may not grow past `bytes`, and a write past it fails with EFBIG
/// instead of raising SIGXFSZ. False when setrlimit fails.
bool limit_file_size(uint64_t bytes);

/// In this process (a child): `dir` becomes read-only through a read-only bind mount in a private
/// mount namespace. False when the kernel or the container refuses (no CAP_SYS_ADMIN).
bool read_only_bind(const std::filesystem::path& dir);

/// Another process that holds the write lock of the SQLite database at `path` (BEGIN IMMEDIATE)
/// from construction until release() or destruction, then rolls back: it never changes the file.
class WriteLockHolder {
 public:
  explicit WriteLockHolder(const std::filesystem::path& path);
  ~WriteLockHolder();
  WriteLockHolder(const WriteLockHolder&) = delete;
  WriteLockHolder& operator=(const WriteLockHolder&) = delete;
  /// Ends the transaction and waits for the process; returns its exit status (0: it held the lock).
  int release();

 private:
  pid_t pid_ = -1;
  int release_fd_ = -1;
};

/// The largest size among `path` and its -wal and -shm files (0 for those absent).
uint64_t largest_file_size(const std::filesystem::path& db);

/// A fingerprint of a file's bytes (size and FNV-1a), to show that a file was left unchanged.
std::string fingerprint(const std::filesystem::path& file);

}  // namespace ktune::hardening
