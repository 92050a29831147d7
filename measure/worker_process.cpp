#include "measure/worker_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "ktune/error.hpp"
#include "measure/steady_clock.hpp"

extern char** environ;

namespace ktune::measure {

namespace {
void close_fd(int& fd) noexcept {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

/// The forked child up to execve: only async-signal-safe calls (the parent may have threads).
/// The worker dies with its parent whatever kills the parent (PR_SET_PDEATHSIG, kept across exec;
/// the getppid() check covers a parent that died before the prctl). SIGINT and SIGTERM are ignored:
/// a Ctrl-C in the terminal or a scheduler's SIGTERM to every process of the job reaches the worker
/// too, and the parent decides (it lets the running candidate finish, then stops it), so a candidate
/// is never stored as crashed because a person or a scheduler stopped the sweep.
[[noreturn]] void exec_child(char* const* cargv, pid_t parent, int channel, int output, int exec_status) {
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(127);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, nullptr);
  ::sigaction(SIGTERM, &ignore, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Move both ends above the targets first (a daemon may have 0-2 closed, so the socket pair can sit
  // there), then onto fd 3, stderr and stdout: stray prints must not reach the channel. The targets
  // must survive execve, so their FD_CLOEXEC is cleared (dup2 onto the same number would keep it).
  constexpr int kAbove = 10;
  channel = ::fcntl(channel, F_DUPFD_CLOEXEC, kAbove);
  output = ::fcntl(output, F_DUPFD_CLOEXEC, kAbove);
  if (channel < 0 || output < 0 || ::dup2(channel, WorkerProcess::kChildFd) < 0 ||
      ::dup2(output, STDERR_FILENO) < 0 || ::dup2(output, STDOUT_FILENO) < 0 ||
      ::fcntl(WorkerProcess::kChildFd, F_SETFD, 0) < 0 || ::fcntl(STDERR_FILENO, F_SETFD, 0) < 0 ||
      ::fcntl(STDOUT_FILENO, F_SETFD, 0) < 0) {
    const int e = errno;
    (void)!::write(exec_status, &e, sizeof e);
    ::_exit(127);
  }
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd >= 0 && ::dup2(null_fd, STDIN_FILENO) >= 0) ::fcntl(STDIN_FILENO, F_SETFD, 0);
  ::execve(cargv[0], cargv, environ);
  const int e = errno;
  (void)!::write(exec_status, &e, sizeof e);
  ::_exit(127);
}
}  // namespace

std::unique_ptr<WorkerProcess> WorkerProcess::spawn(const std::vector<std::string>& argv) {
  if (argv.empty()) throw Error(ErrorKind::kBadInput, "worker command line is empty");
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    throw Error(ErrorKind::kRuntime,
                fmt::format("socketpair for the worker failed: {}", std::strerror(errno)));
  }
  int err[2];
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    throw Error(ErrorKind::kRuntime,
                fmt::format("pipe for the worker's stderr failed: {}", std::strerror(errno)));
  }
  std::vector<std::string> args = argv;
  args.emplace_back("--fd");
  args.push_back(std::to_string(kChildFd));
  std::vector<char*> cargv;
  for (std::string& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  // The child reports a failed exec through this pipe; a successful exec closes it (O_CLOEXEC).
  int exec_status[2];
  if (::pipe2(exec_status, O_CLOEXEC) != 0) {
    for (int fd : {sv[0], sv[1], err[0], err[1]}) ::close(fd);
    throw Error(ErrorKind::kRuntime,
                fmt::format("pipe for the worker's start failed: {}", std::strerror(errno)));
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(cargv.data(), parent, sv[1], err[1], exec_status[1]);  // never returns
  const int fork_errno = errno;
  ::close(sv[1]);
  ::close(err[1]);
  ::close(exec_status[1]);
  int rc = pid < 0 ? fork_errno : 0;
  if (pid > 0) {
    int child_errno = 0;
    ssize_t n;
    do {
      n = ::read(exec_status[0], &child_errno, sizeof child_errno);
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(sizeof child_errno)) {
      rc = child_errno;
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }
  ::close(exec_status[0]);
  if (rc != 0) {
    ::close(sv[0]);
    ::close(err[0]);
    throw Error(ErrorKind::kRuntime, fmt::format("cannot start worker '{}': {}", argv[0], std::strerror(rc)));
  }
  std::unique_ptr<WorkerProcess> w(new WorkerProcess());
  w->pid_ = pid;
  w->channel_ = sv[0];
  w->stderr_ = err[0];
  ::fcntl(w->stderr_, F_SETFL, ::fcntl(w->stderr_, F_GETFL) | O_NONBLOCK);
  return w;
}

WorkerProcess::~WorkerProcess() {
  kill();
  close_fd(channel_);
  close_fd(stderr_);
}

void WorkerProcess::send(const Message& message) { write_message(channel_, message); }

void WorkerProcess::drain_stderr() noexcept {
  if (stderr_ < 0) return;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(stderr_, buf, sizeof buf);
    if (n > 0) {
      stderr_tail_.append(buf, static_cast<std::size_t>(n));
      if (stderr_tail_.size() > kStderrTailBytes)
        stderr_tail_.erase(0, stderr_tail_.size() - kStderrTailBytes);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) close_fd(stderr_);
    return;
  }
}

void WorkerProcess::reap(bool block) noexcept {
  if (pid_ <= 0 || wait_status_) return;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) wait_status_ = status;
  if (r < 0) wait_status_ = -1;  // not our child any more; nothing to reap
}

bool WorkerProcess::exited() noexcept {
  reap(false);
  return wait_status_.has_value();
}

void WorkerProcess::kill() noexcept {
  if (pid_ <= 0 || wait_status_) return;
  ::kill(pid_, SIGKILL);
  reap(true);
  drain_stderr();
}

WorkerProcess::Received WorkerProcess::receive(double timeout_ms) {
  Received out;
  const double deadline = now_ms() + timeout_ms;
  char chunk[65536];
  for (;;) {
    try {
      if (auto m = decoder_.next()) {
        out.status = Status::kMessage;
        out.message = std::move(*m);
        return out;
      }
    } catch (const Error& e) {
      out.status = Status::kProtocolError;
      out.error = e.what();
      return out;
    }
    const double left = deadline - now_ms();
    if (left <= 0) {
      out.status = Status::kTimeout;
      return out;
    }
    pollfd fds[2] = {{channel_, POLLIN, 0}, {stderr_, POLLIN, 0}};
    const int nfds = stderr_ >= 0 ? 2 : 1;
    const int pr = ::poll(fds, static_cast<nfds_t>(nfds), static_cast<int>(std::min(left, 1000.0)) + 1);
    if (pr < 0 && errno != EINTR) {
      out.status = Status::kProtocolError;
      out.error = fmt::format("poll on the worker channel failed: {}", std::strerror(errno));
      return out;
    }
    if (nfds == 2 && (fds[1].revents & (POLLIN | POLLHUP))) drain_stderr();
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t n = ::read(channel_, chunk, sizeof chunk);
      if (n > 0) {
        decoder_.feed({chunk, static_cast<std::size_t>(n)});
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      // End of stream: the child exited or died. Give it a moment to be reapable, then make sure.
      for (int i = 0; i < 100 && !exited(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      kill();
      drain_stderr();
      out.status = decoder_.pending() > 0 ? Status::kProtocolError : Status::kExited;
      if (out.status == Status::kProtocolError) {
        out.error = fmt::format("worker stream ended inside a frame ({} bytes pending); worker {}",
                                decoder_.pending(), exit_description());
      }
      return out;
    }
  }
}

std::string WorkerProcess::exit_description() const {
  if (!wait_status_) return "running";
  const int st = *wait_status_;
  if (st == -1) return "gone (not reapable)";
  if (WIFEXITED(st)) return fmt::format("exited with status {}", WEXITSTATUS(st));
  if (WIFSIGNALED(st)) {
    const int sig = WTERMSIG(st);
    const char* abbrev = sigabbrev_np(sig);
    return fmt::format("killed by signal {} (SIG{}: {})", sig, abbrev ? abbrev : "?", strsignal(sig));
  }
  return fmt::format("ended with wait status {}", st);
}

}  // namespace ktune::measure
