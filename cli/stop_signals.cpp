#include "cli/stop_signals.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <thread>

#include "ktune/error.hpp"

namespace ktune::cli {
namespace {

// Lock-free atomics: safe to store from a signal handler.
std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

struct sigaction g_previous_int {};
struct sigaction g_previous_term {};
std::atomic<bool> g_installed{false};

constexpr char kIntNote[] =
    "\nktune: SIGINT: finishing the running candidate, then stopping (Ctrl-C again stops at once)\n";
constexpr char kTermNote[] =
    "\nktune: SIGTERM: finishing the running candidate, then stopping (SIGTERM again stops at once)\n";

std::atomic<bool> g_waiter_stop{false};
std::thread g_waiter;
sigset_t g_previous_mask;

sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

extern "C" void on_stop_signal(int sig) {
  const int saved_errno = errno;
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);
  g_stop.store(true);
  if (sig == SIGINT) {
    (void)!::write(STDERR_FILENO, kIntNote, sizeof kIntNote - 1);
  } else {
    (void)!::write(STDERR_FILENO, kTermNote, sizeof kTermNote - 1);
  }
  errno = saved_errno;
}

/// Takes SIGINT and SIGTERM, blocked in every thread started after the StopSignals, off the pending
/// set: the first sets the flag, the same one again takes its default action (stops at once). A
/// handler never runs for them, so none a library installs meanwhile can either (NVRTC's, set while
/// it compiles, exits with status 4).
void wait_for_signals() {
  const sigset_t set = stop_set();
  int seen = 0;
  while (!g_waiter_stop.load()) {
    const timespec tick{0, 100'000'000};
    const int sig = ::sigtimedwait(&set, nullptr, &tick);
    if (sig != SIGINT && sig != SIGTERM) continue;
    if (sig == seen) {
      ::signal(sig, SIG_DFL);
      sigset_t one;
      sigemptyset(&one);
      sigaddset(&one, sig);
      ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
      ::raise(sig);
      continue;
    }
    if (seen == 0) seen = sig;
    on_stop_signal(sig);
  }
}

}  // namespace

StopSignals::StopSignals() {
  if (g_installed.exchange(true)) throw Error(ErrorKind::kRuntime, "StopSignals installed twice");
  g_stop.store(false);
  g_signal.store(0);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // One-shot: a second signal of the same kind takes the default action. SA_RESTART: threads in a
  // read or write (SQLite, NVRTC) carry on; poll() still returns EINTR and the callers retry.
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  ::sigaction(SIGINT, &action, &g_previous_int);
  ::sigaction(SIGTERM, &action, &g_previous_term);
  // Blocked here, and so in every thread started from here on; taken by the waiting thread.
  const sigset_t set = stop_set();
  ::pthread_sigmask(SIG_BLOCK, &set, &g_previous_mask);
  g_waiter_stop.store(false);
  g_waiter = std::thread(wait_for_signals);
}

StopSignals::~StopSignals() {
  g_waiter_stop.store(true);
  if (g_waiter.joinable()) g_waiter.join();
  ::pthread_sigmask(SIG_SETMASK, &g_previous_mask, nullptr);
  ::sigaction(SIGINT, &g_previous_int, nullptr);
  ::sigaction(SIGTERM, &g_previous_term, nullptr);
  g_installed.store(false);
}

const std::atomic<bool>& StopSignals::flag() const { return g_stop; }

int StopSignals::signal() const { return g_signal.load(); }

const char* StopSignals::signal_name() const {
  switch (signal()) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "";
  }
}

}  // namespace ktune::cli
