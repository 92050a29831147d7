// The worker's lifetime around a stopped or killed parent, against the fake worker: a worker never
// outlives its parent whatever kills the parent (SIGKILL included); SIGINT and SIGTERM sent to the
// worker itself (a terminal's Ctrl-C, a scheduler's signal to every process of the job) do not kill
// it; a stop request lets the running candidate answer, and cuts a hanging one short after the
// grace period, killing its worker.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "measure/candidate_runner.hpp"

namespace ktune::measure {
namespace {

using Clock = std::chrono::steady_clock;

RunnerOptions fake_options() {
  RunnerOptions o;
  o.worker_command = {KTUNE_FAKE_WORKER};
  o.start_timeout_ms = 10000;
  return o;
}

CandidateRequest request(uint64_t id, std::string name, double timeout_ms = 5000) {
  CandidateRequest r;
  r.id = id;
  r.name = std::move(name);
  r.bytes_moved = 10;
  r.timing.candidate_timeout_ms = timeout_ms;
  r.launches.push_back({std::string(64, '\x5a'), "_Z4copyv", {1, 1, 1}, {32, 1, 1}, 0, {}});
  return r;
}

/// True while `pid` is a live process (a zombie nobody reaped yet counts as gone).
bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return false;  // gone between the two looks
  return text[close + 2] != 'Z' && text[close + 2] != 'X';
}

/// Waits up to `limit` for `pid` to be gone.
bool gone_within(pid_t pid, std::chrono::milliseconds limit) {
  const auto until = Clock::now() + limit;
  while (Clock::now() < until) {
    if (!alive(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return !alive(pid);
}

TEST(WorkerLifetime, AWorkerDiesWithItsParentKilledBySigkill) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    // The parent of the worker: start it, say its pid, then wait on a candidate that hangs.
    ::close(pipe_fds[0]);
    CandidateRunner runner(fake_options());
    if (runner.run(request(1, "ok")).outcome != Outcome::kOk) ::_exit(3);
    const int pid = runner.worker_pid();
    (void)!::write(pipe_fds[1], &pid, sizeof pid);
    runner.run(request(2, "hang", 60000));
    ::_exit(4);
  }
  ::close(pipe_fds[1]);
  int worker = 0;
  ASSERT_EQ(::read(pipe_fds[0], &worker, sizeof worker), static_cast<ssize_t>(sizeof worker));
  ::close(pipe_fds[0]);
  ASSERT_GT(worker, 0);
  EXPECT_TRUE(alive(worker));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the worker is inside "hang" now

  ASSERT_EQ(::kill(parent, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(parent, &status, 0), parent);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(gone_within(worker, std::chrono::milliseconds(5000)))
      << "worker " << worker << " outlived its SIGKILLed parent";
}

TEST(WorkerLifetime, SigintAndSigtermToTheWorkerDoNotKillIt) {
  CandidateRunner runner(fake_options());
  ASSERT_EQ(runner.run(request(1, "ok")).outcome, Outcome::kOk);
  const pid_t worker = runner.worker_pid();
  ASSERT_EQ(::kill(worker, SIGTERM), 0);
  ASSERT_EQ(::kill(worker, SIGINT), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(alive(worker));
  const CandidateResult r = runner.run(request(2, "ok-after-signals"));
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.reason;
  EXPECT_EQ(r.worker_pid, worker);
  EXPECT_EQ(runner.workers_started(), 1);
}

TEST(WorkerLifetime, AStopLetsTheRunningCandidateAnswer) {
  std::atomic<bool> stop{true};  // asked before the candidate even started
  RunnerOptions o = fake_options();
  o.stop = &stop;
  CandidateRunner runner(o);
  const CandidateResult r = runner.run(request(1, "ok"));
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.reason;
  EXPECT_FALSE(r.interrupted);
}

TEST(WorkerLifetime, AStopCutsAHangingCandidateShortAfterTheGraceAndKillsItsWorker) {
  std::atomic<bool> stop{false};
  RunnerOptions o = fake_options();
  o.stop = &stop;
  o.stop_grace_ms = 300;
  CandidateRunner runner(o);
  ASSERT_EQ(runner.run(request(1, "ok")).outcome, Outcome::kOk);
  const pid_t worker = runner.worker_pid();
  std::thread stopper([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop.store(true);
  });
  const auto t0 = Clock::now();
  const CandidateResult r = runner.run(request(2, "hang", 60000));
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  stopper.join();
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.outcome, Outcome::kSkipped);
  EXPECT_NE(r.reason.find("interrupted"), std::string::npos) << r.reason;
  EXPECT_GE(s, 0.45) << "the grace starts at the stop (200 ms), then 300 ms";
  EXPECT_LT(s, 5.0) << "not the candidate's 60 s timeout";
  EXPECT_TRUE(gone_within(worker, std::chrono::milliseconds(2000)));
  EXPECT_EQ(runner.worker_pid(), 0);
}

TEST(WorkerLifetime, WithoutAStopAHangStillEndsAtItsTimeout) {
  RunnerOptions o = fake_options();
  std::atomic<bool> stop{false};
  o.stop = &stop;  // present but never set: the sliced wait must still honour the timeout
  CandidateRunner runner(o);
  const CandidateResult r = runner.run(request(1, "hang", 400));
  EXPECT_EQ(r.outcome, Outcome::kTimeout) << r.reason;
  EXPECT_FALSE(r.interrupted);
  EXPECT_LT(r.wall_ms, 5000);
}

}  // namespace
}  // namespace ktune::measure
