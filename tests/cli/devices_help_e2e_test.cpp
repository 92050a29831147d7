// `ktune devices`, `--help`, `--version` and usage errors end to end.

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/device_info.hpp"
#include "ktune/error.hpp"
#include "tests/cli/ktune_runner.hpp"

namespace ktune::testing {
namespace {

/// The device count as the harness sees it in this process (an independent check of the binary),
/// -1 when there is no driver or no device.
int devices_here() {
  try {
    return harness::device_count();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNoDevice) << e.what();
    return -1;
  }
}

TEST(DevicesCommand, CalibrateWithoutAGpuExits3AndWritesNothing) {
  if (devices_here() > 0) GTEST_SKIP() << "a GPU is present: calibration is covered on the GPU machine";
  const auto db =
      std::filesystem::temp_directory_path() / ("ktune-calibrate-" + std::to_string(::getpid()) + ".db");
  const auto r = run_ktune({"devices", "--calibrate", "--db", db.string(), "--json"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("ktune: error:"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(std::filesystem::exists(db)) << "no device: no database created";
  std::filesystem::remove(db);
}

TEST(DevicesCommand, DbNeedsCalibrate) {
  const auto r = run_ktune({"devices", "--db", "/tmp/x.db"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST(DevicesCommand, ReportsDevicesOrSaysClearlyThereAreNone) {
  const int n = devices_here();
  const auto r = run_ktune({"devices", "--json"});
  if (n <= 0) {
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("ktune: error:"), std::string::npos) << r.err;
    EXPECT_TRUE(r.err.find("driver") != std::string::npos || r.err.find("GPU") != std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("devices").size(), static_cast<size_t>(n));
  const auto want = harness::query_device(0);
  const auto& d = j.at("devices")[0];
  EXPECT_EQ(d.at("name"), want.name);
  EXPECT_EQ(d.at("sm_count"), want.sm_count);
  EXPECT_EQ(d.at("memory_bytes"), want.memory_bytes);
  EXPECT_EQ(d.at("cc_major"), want.cc_major);
  EXPECT_TRUE(j.contains("nvrtc_version"));
  for (const char* key : {"uuid", "l2_bytes", "smem_per_block_optin", "max_threads_per_block",
                          "max_regs_per_block", "sm_clock_khz", "mem_clock_khz", "driver_version"}) {
    EXPECT_TRUE(d.contains(key)) << key;
  }
  const auto human = run_ktune({"devices"});
  EXPECT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find(want.name), std::string::npos) << human.out;
}

struct HelpCase {
  std::vector<std::string> args;
  std::vector<std::string> mentions;
};

TEST(Help, EveryCommandExplainsItsOptions) {
  const std::vector<HelpCase> cases = {
      {{"--help"}, {"devices", "query", "cache", "Exit codes", "--version"}},
      {{"devices", "--help"}, {"--json", "Examples"}},
      {{"query", "--help"},
       {"--kernel", "--shape", "--dtype", "--gpu", "--device", "--db", "--no-fallback", "--json",
        "m=16,n=4096,k=4096", "decode_attention"}},
      {{"cache", "--help"}, {"list", "export", "import", "merge", "prune", "verify"}},
      {{"cache", "list", "--help"}, {"--db", "--json", "--kernel", "e.g."}},
      {{"cache", "export", "--help"}, {"--out", "--db", "e.g."}},
      {{"cache", "import", "--help"}, {"FILE", "--db"}},
      {{"cache", "merge", "--help"}, {"DB...", "--db"}},
      {{"cache", "prune", "--help"}, {"--db", "stale"}},
      {{"cache", "verify", "--help"}, {"--db", "integrity"}},
  };
  for (const auto& c : cases) {
    std::string what;
    for (const auto& a : c.args) what += a + " ";
    SCOPED_TRACE(what);
    const auto r = run_ktune(c.args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    for (const auto& m : c.mentions) EXPECT_NE(r.out.find(m), std::string::npos) << m << " in\n" << r.out;
  }
}

TEST(Help, EverySubcommandListedAtTopLevelAnswersHelp) {
  const auto top = run_ktune({"--help"});
  ASSERT_EQ(top.exit_code, 0);
  const auto start = top.out.find("Subcommands:\n");
  ASSERT_NE(start, std::string::npos) << top.out;
  std::vector<std::string> names;
  std::istringstream lines(top.out.substr(start + 13));
  for (std::string line; std::getline(lines, line) && line.rfind("  ", 0) == 0;) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    names.push_back(name);
  }
  EXPECT_GE(names.size(), 3u) << top.out;
  for (const auto& name : names) {
    const auto r = run_ktune({name, "--help"});
    EXPECT_EQ(r.exit_code, 0) << name;
    EXPECT_NE(r.out.find("Usage: ktune " + name), std::string::npos) << name << ":\n" << r.out;
  }
}

TEST(Help, VersionPrintsTheVersion) {
  const auto r = run_ktune({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find(std::string("ktune ") + KTUNE_EXPECTED_VERSION), std::string::npos) << r.out;
}

TEST(Usage, BadUsageExits2) {
  EXPECT_EQ(run_ktune({}).exit_code, 2);
  EXPECT_EQ(run_ktune({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(run_ktune({"devices", "--bogus"}).exit_code, 2);
  EXPECT_EQ(run_ktune({"cache"}).exit_code, 2);
  EXPECT_EQ(
      run_ktune({"query", "--kernel", "gemm", "--shape", "m=1,n=1,k=1", "--dtype", "bf16", "--device", "-3"})
          .exit_code,
      2);
}

}  // namespace
}  // namespace ktune::testing
