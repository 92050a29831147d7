// `ktune tune` end to end on this machine: bad input exits 2 naming the bad part, no GPU exits 3
// with a clear message, and --compile-only over the quick preset (NVRTC, no GPU) stores every
// candidate's resources in the database and answers a second run from it.

#include <gtest/gtest.h>

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
      EXPECT_TRUE(r.m.outcome == cache::Outcome::kSkipped || r.m.outcome == cache::Outcome::kCompileError ||
                  r.m.outcome == cache::Outcome::kExceedsLimits)
          << r.m.config_name;
      if (r.m.outcome == cache::Outcome::kSkipped) {
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

}  // namespace
}  // namespace ktune::tuner
