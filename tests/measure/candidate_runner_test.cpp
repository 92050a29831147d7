// The parent side of worker isolation against a fake worker that crashes, hangs and writes garbage.
#include "measure/candidate_runner.hpp"
#include "measure/retime.hpp"

#include <cstdlib>
#include <set>

#include <gtest/gtest.h>

#include "ktune/error.hpp"

namespace ktune::measure {
namespace {

RunnerOptions fake_options() {
  RunnerOptions o;
  o.worker_command = {KTUNE_FAKE_WORKER};
  o.start_timeout_ms = 10000;
  return o;
}

CandidateRequest request(uint64_t id, std::string name, double true_us = 10) {
  CandidateRequest r;
  r.id = id;
  r.name = std::move(name);
  r.bytes_moved = true_us;  // the fake worker reports samples around this value
  r.timing.candidate_timeout_ms = 5000;
  r.launches.push_back({std::string(64, '\x5a'), "_Z4copyv", {1, 1, 1}, {32, 1, 1}, 0, {}});
  return r;
}

struct Expect {
  const char* name;
  Outcome outcome;
  const char* reason_part;
};

TEST(CandidateRunner, FailuresAreRecordedAndGoodCandidatesAfterThemAreMeasured) {
  ::unsetenv("FAKE_WORKER_HELLO");
  CandidateRunner runner(fake_options());
  const std::vector<Expect> plan{
      {"ok-1", Outcome::kOk, ""},
      {"segv", Outcome::kCrashed, "SIGSEGV"},
      {"ok-2", Outcome::kOk, ""},
      {"abort", Outcome::kCrashed, "SIGABRT"},
      {"ok-3", Outcome::kOk, ""},
      {"hang", Outcome::kTimeout, "no result within"},
      {"ok-4", Outcome::kOk, ""},
      {"garbage", Outcome::kLaunchError, "protocol error"},
      {"ok-5", Outcome::kOk, ""},
      {"exit", Outcome::kCrashed, "exited with status 7"},
      {"wrong-id", Outcome::kLaunchError, "protocol error"},
      {"bad-body", Outcome::kLaunchError, "protocol error"},
      {"ok-6", Outcome::kOk, ""},
  };
  std::set<int> pids;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    CandidateRequest req = request(100 + i, plan[i].name, 10.0 + static_cast<double>(i));
    if (req.name == "hang") req.timing.candidate_timeout_ms = 700;
    const CandidateResult r = runner.run(req);
    SCOPED_TRACE(plan[i].name);
    EXPECT_EQ(to_string(r.outcome), to_string(plan[i].outcome)) << r.reason;
    EXPECT_EQ(r.id, req.id);
    EXPECT_EQ(r.name, req.name);
    EXPECT_NE(r.reason.find(plan[i].reason_part), std::string::npos) << r.reason;
    EXPECT_GT(r.wall_ms, 0);
    pids.insert(r.worker_pid);
    if (plan[i].outcome == Outcome::kOk) {
      ASSERT_TRUE(r.stats);
      EXPECT_NEAR(r.stats->median, 10.0 + static_cast<double>(i), 0.05);
      EXPECT_EQ(r.stats->samples, 20U);
    } else {
      EXPECT_FALSE(r.stats);
    }
    if (plan[i].outcome == Outcome::kTimeout) {
      EXPECT_LT(r.wall_ms, 5000);
    }
  }
  // One worker at the start and one after each of the 7 failures that kill it.
  EXPECT_EQ(runner.workers_started(), 8);
  EXPECT_EQ(pids.size(), 8U);
  EXPECT_EQ(runner.device().value("name", ""), "Fake GPU");
}

TEST(CandidateRunner, TheWholeLaunchSequenceReachesTheWorker) {
  ::unsetenv("FAKE_WORKER_HELLO");
  CandidateRunner runner(fake_options());
  CandidateRequest r = request(7, "ok-split-k", 42);
  const std::string shared(3000, '\x3c');  // GEMM and reduction: one compile
  r.launches = {{std::string(1000, '\x11'), "_Z4zerov", {8, 1, 1}, {256, 1, 1}, 0, {}},
                {shared, "_Z4gemmv", {32, 1, 4}, {128, 1, 1}, 16384, {KernelArg::buf("a")}},
                {shared, "_Z6reducev", {16, 1, 1}, {256, 1, 1}, 0, {KernelArg::i32(4)}}};
  r.main_launch = 1;
  const CandidateResult got = runner.run(r);
  ASSERT_EQ(got.outcome, Outcome::kOk) << got.reason;
  EXPECT_EQ(got.resources.at("launches"), 3);
  EXPECT_EQ(got.resources.at("functions"), nlohmann::json({"_Z4zerov", "_Z4gemmv", "_Z6reducev"}));
  EXPECT_EQ(got.resources.at("cubin_bytes"), nlohmann::json({1000, 3000, 3000}));
  EXPECT_EQ(got.resources.at("main_launch"), 1);
  ASSERT_TRUE(got.stats);
  EXPECT_NEAR(got.stats->median, 42, 0.1);
}

TEST(CandidateRunner, CrashReasonCarriesTheWorkersStderr) {
  ::unsetenv("FAKE_WORKER_HELLO");
  CandidateRunner runner(fake_options());
  const CandidateResult r = runner.run(request(1, "abort"));
  EXPECT_EQ(r.outcome, Outcome::kCrashed);
  EXPECT_NE(r.reason.find("fake worker: running abort"), std::string::npos) << r.reason;
}

TEST(CandidateRunner, WorkerWithoutDeviceThrowsNoDevice) {
  ::setenv("FAKE_WORKER_HELLO", "nodevice", 1);
  CandidateRunner runner(fake_options());
  try {
    runner.run(request(1, "ok"));
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNoDevice);
    EXPECT_NE(std::string(e.what()).find("no CUDA device (fake)"), std::string::npos) << e.what();
  }
  ::unsetenv("FAKE_WORKER_HELLO");
}

TEST(CandidateRunner, WorkerThatDiesBeforeHelloGivesUpAfterRetries) {
  ::setenv("FAKE_WORKER_HELLO", "die", 1);
  RunnerOptions o = fake_options();
  o.max_start_failures = 2;
  CandidateRunner runner(o);
  try {
    runner.run(request(1, "ok"));
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(std::string(e.what()).find("exited with status 5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dying before hello"), std::string::npos) << e.what();
  }
  EXPECT_EQ(runner.workers_started(), 2);
  ::unsetenv("FAKE_WORKER_HELLO");
}

TEST(Retime, PoolsSamplesOverInterleavedRoundsAndKeepsFailures) {
  ::unsetenv("FAKE_WORKER_HELLO");
  CandidateRunner runner(fake_options());
  std::vector<CandidateRequest> c{request(1, "ok-a", 20), request(2, "segv"), request(3, "ok-b", 30)};
  const auto out = retime_interleaved(runner, c, 3);
  ASSERT_EQ(out.size(), 3U);
  EXPECT_EQ(out[0].outcome, Outcome::kOk);
  ASSERT_TRUE(out[0].stats);
  EXPECT_EQ(out[0].stats->samples, 60U);  // 3 rounds x 20 samples pooled
  EXPECT_NEAR(out[0].stats->median, 20, 0.05);
  EXPECT_EQ(out[0].stop_reason, "retimed");
  EXPECT_EQ(out[1].outcome, Outcome::kCrashed);
  EXPECT_EQ(out[2].stats->samples, 60U);
  EXPECT_NEAR(out[2].stats->median, 30, 0.05);
  EXPECT_EQ(runner.workers_started(), 2);  // the crash is not retried in later rounds
}

TEST(CandidateRunner, MissingWorkerExecutableIsAClearError) {
  RunnerOptions o;
  o.worker_command = {"/nonexistent/ktune", "worker"};
  CandidateRunner runner(o);
  try {
    runner.run(request(1, "ok"));
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/ktune"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ktune::measure
