// `ktune tune` stopped by SIGTERM or SIGINT mid-sweep (compile-only: NVRTC, no GPU). The sweep
// stores what it compiled, prints how to resume, and exits 143 / 130; the database passes
// `ktune cache verify`; the printed resume command, run through /bin/sh, finishes the key without
// compiling again a config the stopped run committed. (The worker side of a stop, and a worker
// dying with its parent, are measure/worker_lifetime_test.cpp; the GPU sweep is
// tune_signals_gpu_test.cpp.)

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "tests/cli/ktune_runner.hpp"
#include "tests/cli/test_db_fixture.hpp"

namespace ktune::testing {
namespace tune_signals_e2e_test {  // named: the unity build batches this file with others

using Clock = std::chrono::steady_clock;

// rmsnorm's row-wise template over 32 configs (4 x 2 x 2 x 2), every one of which its spec accepts
// (the spec's rules filter a space's points, so a refused one would not be proposed): each compiles
// in ~0.2 s here, so the sweep takes several seconds, long enough to be stopped mid-way.
constexpr const char* kSpace = R"TOML(
kernel = "rmsnorm"
dims = ["rows", "hidden"]
description = "32 rmsnorm configs (tune_signals_e2e_test)"
[[template]]
name = "rowwise"
layouts = ["", "residual"]
[template.params]
THREADS = [64, 128, 256, 512]
ROWS = [1, 2]
VEC = [2, 4]
REG = [0, 1]
)TOML";
constexpr size_t kConfigs = 32;

/// Config name -> number of rows for it.
std::map<std::string, int> stored_rows(const std::string& db_path) {
  std::map<std::string, int> rows;
  auto db = cache::ConfigCache::open(db_path, cache::ConfigCache::Mode::kReadOnly);
  db.for_each_measurement({}, [&](const cache::StoredMeasurement& m) { ++rows[m.m.config_name]; });
  return rows;
}

/// Rows in the database now; 0 while it is being created.
size_t rows_now(const std::string& db_path) {
  if (!std::filesystem::exists(db_path)) return 0;
  try {
    return stored_rows(db_path).size();
  } catch (const std::exception&) {
    return 0;  // being created
  }
}

class TuneSignals : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { std::ofstream(space_) << kSpace; }
  std::vector<std::string> args() const {
    return {"tune",
            "--kernel",
            "rmsnorm",
            "--space",
            space_.string(),
            "--shape",
            "rows=64,hidden=4096",
            "--dtype",
            "f32",
            "--compile-only",
            "--arch",
            "sm_90",
            "--compile-threads",
            "1",
            "--json"};
  }

  TempDir dir_;
  std::filesystem::path space_ = dir_ / "rms32.toml";
  std::string db_ = (dir_ / "signals.db").string();
};

TEST_P(TuneSignals, MidSweepCommitsExitsWithTheSignalsCodeAndResumes) {
  const int sig = GetParam();
  // The database through $KTUNE_DB, so the resume command must name it itself.
  KtuneProcess sweep(args(), {{"KTUNE_DB", db_}});
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (rows_now(db_) < 2 && !sweep.exited() && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_FALSE(sweep.exited()) << "the sweep ended before it could be stopped:\n" << sweep.wait().err;
  ASSERT_GE(rows_now(db_), 2u) << sweep.err_so_far();
  const auto signalled = Clock::now();
  sweep.signal(sig);
  const RunResult r = sweep.wait();
  const double exit_s = std::chrono::duration<double>(Clock::now() - signalled).count();
  ASSERT_EQ(r.exit_code, 128 + sig) << r.err;
  EXPECT_LT(exit_s, 30) << "a compile-only stop waits for one compile, not the sweep";

  // The one JSON document says what happened and how to resume.
  const auto doc = nlohmann::json::parse(r.out);
  const std::string name = sig == SIGINT ? "SIGINT" : "SIGTERM";
  EXPECT_EQ(doc.at("stopped").at("signal"), name);
  EXPECT_EQ(doc.at("stopped").at("keys_planned"), 1);
  EXPECT_EQ(doc.at("stopped").at("keys_done"), 0);
  ASSERT_EQ(doc.at("keys").size(), 1u);
  EXPECT_TRUE(doc.at("keys").at(0).value("stopped", false));
  EXPECT_TRUE(doc.at("keys").at(0).at("winner").is_null());
  const std::string resume = doc.at("stopped").at("resume");
  EXPECT_NE(resume.find("--db " + db_), std::string::npos) << resume;
  EXPECT_NE(r.err.find("stopped by " + name), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(resume), std::string::npos) << "the resume command is on stderr too:\n" << r.err;

  // Consistent: every committed config once, and the file passes verify.
  const auto committed = stored_rows(db_);
  const size_t evaluated = doc.at("keys").at(0).at("evaluations");
  EXPECT_EQ(committed.size(), evaluated);
  EXPECT_LT(committed.size(), kConfigs);
  for (const auto& [config, n] : committed) EXPECT_EQ(n, 1) << config;
  const auto verify = run_ktune({"cache", "verify", "--db", db_});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;

  // The printed command resumes, without $KTUNE_DB, and compiles only what was left.
  TempDir out;
  const std::string shell = "cd / && env -u KTUNE_DB " + resume + " > " + (out / "resume.json").string() +
                            " 2> " + (out / "resume.err").string();
  const int status = std::system(shell.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status << ": " << resume;
  std::ifstream resumed_file(out / "resume.json");
  const auto resumed = nlohmann::json::parse(resumed_file).at("keys").at(0);
  EXPECT_EQ(resumed.at("evaluations"), kConfigs) << resumed.dump();
  EXPECT_EQ(resumed.at("from_cache"), committed.size()) << resumed.dump();
  EXPECT_EQ(resumed.at("measured"), kConfigs - committed.size()) << resumed.dump();
  const auto all = stored_rows(db_);
  EXPECT_EQ(all.size(), kConfigs);
  for (const auto& [config, n] : all) EXPECT_EQ(n, 1) << config << " was stored twice";
}

INSTANTIATE_TEST_SUITE_P(BothSignals, TuneSignals, ::testing::Values(SIGTERM, SIGINT),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return std::string(p.param == SIGINT ? "Sigint" : "Sigterm");
                         });

}  // namespace tune_signals_e2e_test
}  // namespace ktune::testing
