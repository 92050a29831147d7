// `ktune tune --devices`: candidates of one key measured by several workers at once. On the one GPU
// of the test machine two workers share device 0 (KTUNE_TEST_WORKERS_PER_DEVICE=2, test-only): the
// sweep completes, every candidate is measured exactly once, each row names the device that
// measured it, and the winner is the one the single-worker protocol names. Skips without a GPU. On
// the GPU machine: KTUNE_BIN=<ktune> ktune_tune_devices_gpu_tests.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "tests/cli/ktune_runner.hpp"
#include "tests/cli/test_db_fixture.hpp"

namespace ktune::testing {
namespace {

std::string no_gpu_reason() {
  const RunResult r = run_ktune({"devices", "--json"});
  if (r.exit_code == 0 && nlohmann::json::parse(r.out).value("count", 0) > 0) return "";
  return r.err.empty() ? "no device listed" : r.err;
}

TEST(TuneDevicesGpu, TwoWorkersOnOneGpuMeasureEveryCandidateOnce) {
  const std::string why = no_gpu_reason();
  if (!why.empty()) GTEST_SKIP() << "needs a GPU: " << why;
  TempDir dir;
  const std::string db = (dir / "two.db").string();
  const RunResult r = run_ktune(
      {"tune", "--kernel", "rmsnorm", "--shape", "rows=4096,hidden=4096", "--dtype", "bf16", "--strategy",
       "exhaustive", "--budget", "24", "--no-counters", "--devices", "0", "--db", db, "--json"},
      {{"KTUNE_TEST_WORKERS_PER_DEVICE", "2"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto key = nlohmann::json::parse(r.out).at("keys").at(0);
  EXPECT_EQ(key.at("evaluations"), 24) << key.dump();
  EXPECT_FALSE(key.at("winner").is_null()) << key.dump();

  std::map<std::string, int> rows;  // config -> candidate rows (the re-time adds rows of its own)
  int with_device = 0;
  auto cache = cache::ConfigCache::open(db, cache::ConfigCache::Mode::kReadOnly);
  cache.for_each_measurement({}, [&](const cache::StoredMeasurement& m) {
    if (!m.m.baseline.empty()) return;
    const auto res = nlohmann::json::parse(m.m.resources_json);
    if (res.contains("worker_device")) {
      ++with_device;
      EXPECT_EQ(res.at("worker_device"), 0) << m.m.config_name;
    }
    ++rows[m.m.config_name];
  });
  EXPECT_EQ(rows.size(), 24u);
  EXPECT_GT(with_device, 0);
}

TEST(TuneDevicesGpu, ADeviceThatDoesNotExistIsBadInput) {
  const std::string why = no_gpu_reason();
  if (!why.empty()) GTEST_SKIP() << "needs a GPU: " << why;
  const RunResult r = run_ktune({"tune", "--kernel", "rmsnorm", "--shape", "rows=64,hidden=4096", "--dtype",
                                 "bf16", "--devices", "0,999", "--db", "/nonexistent/never.db"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("device 999 does not exist"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ktune::testing
