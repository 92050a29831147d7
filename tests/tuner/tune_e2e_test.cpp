// `ktune tune` end to end on this machine: bad input exits 2 naming the bad part, no GPU exits 3
// with a clear message, and --compile-only over the quick preset (NVRTC, no GPU) stores every
// candidate's resources in the database and answers a second run from it; split-K configs are
// among the candidates with every launch of their plans.

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "harness/device_info.hpp"
#include "tests/cli/ktune_runner.hpp"
#include "tests/tuner/loop_test_util.hpp"

namespace ktune::tuner {
namespace {

using testing::run_ktune;

bool has_gpu() {
  try {
    return harness::device_count() > 0;
  } catch (const Error&) {
    return false;
  }
}

TEST(TuneCli, WithoutAGpuExits3AndSaysWhatToDo) {
  if (has_gpu()) GTEST_SKIP() << "a GPU is present: tuning would start";
  test::TempDir dir;
  const auto r = run_ktune(
      {"tune", "--kernel", "gemm", "--shape", "m=16,n=4096,k=4096", "--db", (dir / "t.db").string()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("ktune tune needs a CUDA GPU"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--compile-only --arch sm_90"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(TuneCli, DevicesWithoutAGpuExits3) {
  if (has_gpu()) GTEST_SKIP() << "a GPU is present: tuning would start";
  test::TempDir dir;
  for (const char* list : {"all", "0,1"}) {
    const auto r = run_ktune({"tune", "--kernel", "gemm", "--shape", "m=16,n=4096,k=4096", "--devices", list,
                              "--db", (dir / "t.db").string()});
    EXPECT_EQ(r.exit_code, 3) << list << ": " << r.err;
  }
}

TEST(TuneCli, BadInputExits2NamingIt) {
  test::TempDir dir;
  const std::string db = (dir / "t.db").string();
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {{"--kernel", "gemm", "--shape", "m=16,n=0,k=4096"}, "n=0"},
      {{"--kernel", "gemm", "--shape", "m=16,n=4096"}, "k"},
      {{"--kernel", "gemm", "--shape", "m=16,n=4096,k=4096", "--strategy", "greedy"}, "greedy"},
      {{"--kernel", "gemm", "--shape", "m=16,n=4096,k=4096", "--budget", "-5"}, "-5"},
      {{"--kernel", "gemm", "--shape", "m=16,n=4096,k=4096", "--budget", "many"}, "many"},
      {{"--kernel", "gemm", "--shape", "m=16,n=4096,k=4096", "--dtype", "f64"}, "f64"},
      {{"--kernel", "nosuchkernel", "--shape", "m=1"}, "nosuchkernel"},
      {{"--preset", "nosuchpreset"}, "nosuchpreset"},
      {{"--kernel", "gemm", "--preset", "quick"}, "--preset"},
      {{"--kernel", "gemm"}, "--shape"},
      {{"--preset", "quick", "--compile-only"}, "--arch"},
      {{"--preset", "quick", "--compile-only", "--arch", "sm90"}, "sm90"},
      {{"--kernel", "gemm", "--shape", "m=16,n=4096,k=4096", "--devices", "0", "--device", "0"}, "--devices"},
      {{"--preset", "quick", "--compile-only", "--arch", "sm_90", "--devices", "all"}, "--devices"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"tune", "--db", db};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = run_ktune(args);
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << joined << "\n" << r.err;
  }
}

TEST(TuneCli, CompileOnlyQuickPresetStoresResourcesAndResumes) {
  test::TempDir dir;
  const std::string db_path = (dir / "co.db").string();
  const std::vector<std::string> args = {"tune",   "--preset",          "quick", "--compile-only", "--arch",
                                         "sm_90",  "--budget",          "2",     "--db",           db_path,
                                         "--json", "--compile-threads", "2"};
  const auto first = run_ktune(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto doc = nlohmann::json::parse(first.out);
  ASSERT_EQ(doc.at("keys").size(), 4u) << first.out;  // the quick preset's four shapes
  EXPECT_EQ(doc.at("compile_only"), true);
  for (const auto& k : doc.at("keys")) {
    EXPECT_EQ(k.at("evaluations"), 2) << k.dump();
    EXPECT_TRUE(k.at("winner").is_null());
    EXPECT_FALSE(k.contains("error")) << k.dump();
  }

  {
    auto db = cache::ConfigCache::open(db_path, cache::ConfigCache::Mode::kReadOnly);
    const auto rows = test::all_measurements(db);
    ASSERT_EQ(rows.size(), 8u);
    for (const auto& r : rows) {
      EXPECT_EQ(r.gpu.name, "compile-only sm_90");
      EXPECT_EQ(r.gpu.cc_major, 9);
      EXPECT_EQ(r.m.layout, "nt");
      EXPECT_TRUE(r.m.outcome == ktune::Outcome::kSkipped || r.m.outcome == ktune::Outcome::kCompileError ||
                  r.m.outcome == ktune::Outcome::kExceedsLimits)
          << r.m.config_name;
      if (r.m.outcome == ktune::Outcome::kSkipped) {
        EXPECT_EQ(r.m.reason, "compile-only");
        const auto res = nlohmann::json::parse(r.m.resources_json);
        EXPECT_GT(res.at("registers").get<int>(), 0) << r.m.resources_json;
        EXPECT_GT(res.at("threads_per_block").get<int>(), 0) << r.m.resources_json;
        EXPECT_EQ(res.at("arch"), "sm_90");
      }
    }
  }

  // Again: every config is answered from the database; nothing is compiled or stored twice.
  const auto second = run_ktune(args);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const auto doc2 = nlohmann::json::parse(second.out);
  for (const auto& k : doc2.at("keys")) EXPECT_EQ(k.at("from_cache"), 2) << k.dump();
  EXPECT_EQ(doc2.at("compile_cache").at("misses"), 0);
  auto db = cache::ConfigCache::open(db_path, cache::ConfigCache::Mode::kReadOnly);
  EXPECT_EQ(test::all_measurements(db).size(), 8u);
}

// Split-K configs of the gemv and mma templates (deterministic and atomic) and their unsplit
// siblings: a compile-only sweep compiles them all and records every launch of their plans.
constexpr const char* kSplitKSpace = R"TOML(
kernel = "gemm"
dims = ["m", "n", "k"]
description = "split-K configs (tune_e2e_test)"

[[template]]
name = "gemv"
layouts = ["nt"]
[template.params]
BLOCK_K = [512]
SPLIT_K = [1, 4]
WARPS = [4]
ROWS_PER_BLOCK = [2]

[[template]]
name = "mma"
layouts = ["nt", "nn"]
[template.params]
BLOCK_M = [16]
BLOCK_N = [32]
BLOCK_K = [128]
WARPS_M = [1]
WARPS_N = [2]
STAGES = [3]
SPLIT_K = [4]
SPLIT_K_MODE = [0, 1]
SWIZZLE = [1]
)TOML";

TEST(TuneCli, CompileOnlySweepIncludesSplitKCandidatesWithEveryLaunch) {
  test::TempDir dir;
  const std::string space = (dir / "splitk.toml").string();
  {
    std::ofstream f(space);
    f << kSplitKSpace;
  }
  const std::string db_path = (dir / "sk.db").string();
  const auto r = run_ktune({"tune", "--kernel", "gemm", "--space", space, "--shape", "m=16,n=4096,k=4096",
                            "--dtype", "bf16", "--compile-only", "--arch", "sm_90", "--db", db_path, "--json",
                            "--compile-threads", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto key = nlohmann::json::parse(r.out).at("keys").at(0);
  EXPECT_EQ(key.at("candidates"), 4) << key.dump();
  EXPECT_EQ(key.at("evaluations"), 4) << key.dump();
  EXPECT_EQ(key.at("unmeasurable"), 0) << key.dump();

  auto db = cache::ConfigCache::open(db_path, cache::ConfigCache::Mode::kReadOnly);
  std::map<std::string, int> launches;  // config name -> launches of its plan
  for (const auto& row : test::all_measurements(db)) {
    EXPECT_EQ(row.m.reason, "compile-only") << row.m.config_name << ": " << row.m.reason;
    launches[row.m.config_name] = nlohmann::json::parse(row.m.resources_json).at("launches").get<int>();
  }
  const std::map<std::string, int> want = {{"gemm.bf16.nt.gemv.k512.sk1.w4.r2", 1},
                                           {"gemm.bf16.nt.gemv.k512.sk4.w4.r2", 2},
                                           {"gemm.bf16.nt.mma.16x32x128.w1x2.s3.sk4.a0.g1", 2},
                                           {"gemm.bf16.nt.mma.16x32x128.w1x2.s3.sk4.a1.g1", 3}};
  EXPECT_EQ(launches, want);
}

}  // namespace
}  // namespace ktune::tuner
