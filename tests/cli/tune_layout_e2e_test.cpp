// `ktune tune --layout` end to end: the layouts come from the kernel catalog. fp8_gemm without
// --layout stores its default ("nt"), --layout nt+rowcol is recorded as given, and a layout the
// kernel does not have exits 2 naming the kernel and the accepted values (tune and query alike).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "tests/cli/ktune_runner.hpp"
#include "tests/cli/test_db_fixture.hpp"

namespace ktune::testing {
namespace {

// One fp8_gemm config (both modes), so that a compile-only sweep compiles one candidate.
constexpr const char* kOneConfigSpace = R"TOML(
kernel = "fp8_gemm"
dims = ["m", "n", "k"]
description = "one fp8_gemm config (tune_layout_e2e_test)"

[[template]]
name = "mma"
layouts = ["nt", "nt+rowcol"]
[template.params]
BLOCK_M = [16]
BLOCK_N = [64]
BLOCK_K = [64]
WARPS_M = [1]
WARPS_N = [2]
STAGES = [2]
SPLIT_K = [1]
SWIZZLE = [1]
)TOML";

/// The layouts of every stored measurement.
std::set<std::string> stored_layouts(const std::string& db_path) {
  auto db = cache::ConfigCache::open(db_path, cache::ConfigCache::Mode::kReadOnly);
  std::set<std::string> layouts;
  db.for_each_measurement({}, [&](const cache::StoredMeasurement& m) { layouts.insert(m.m.layout); });
  return layouts;
}

class TuneLayout : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream f(space_);
    f << kOneConfigSpace;
  }
  RunResult tune(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"tune",
                                     "--kernel",
                                     "fp8_gemm",
                                     "--space",
                                     space_.string(),
                                     "--shape",
                                     "m=32,n=256,k=512",
                                     "--dtype",
                                     "fp8e4m3",
                                     "--db",
                                     db_,
                                     "--compile-only",
                                     "--arch",
                                     "sm_90",
                                     "--json",
                                     "--compile-threads",
                                     "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_ktune(args);
  }

  TempDir dir_;
  std::filesystem::path space_ = dir_ / "fp8_one.toml";
  std::string db_ = (dir_ / "layout.db").string();
};

TEST_F(TuneLayout, Fp8GemmWithoutLayoutStoresItsDefault) {
  const auto r = tune({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto key = nlohmann::json::parse(r.out).at("keys").at(0);
  EXPECT_EQ(key.at("layout"), "nt") << key.dump();
  EXPECT_EQ(key.at("evaluations"), 1) << key.dump();
  EXPECT_EQ(stored_layouts(db_), std::set<std::string>{"nt"});
}

TEST_F(TuneLayout, Fp8GemmRowColModeIsRecorded) {
  const auto r = tune({"--layout", "nt+rowcol"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto key = nlohmann::json::parse(r.out).at("keys").at(0);
  EXPECT_EQ(key.at("layout"), "nt+rowcol") << key.dump();
  EXPECT_EQ(stored_layouts(db_), std::set<std::string>{"nt+rowcol"});
  auto db = cache::ConfigCache::open(db_, cache::ConfigCache::Mode::kReadOnly);
  db.for_each_measurement({}, [&](const cache::StoredMeasurement& m) {
    EXPECT_EQ(m.m.reason, "compile-only") << m.m.config_name;
    EXPECT_NE(m.m.config_name.find("nt+rowcol"), std::string::npos) << m.m.config_name;
  });
}

TEST_F(TuneLayout, ALayoutTheKernelLacksExits2ListingTheAllowedOnes) {
  const auto r = tune({"--layout", "nn"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("fp8_gemm"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'nn'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nt, nt+rowcol"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(db_)) << "nothing should be stored";

  // An operator's mode the same way: softmax has no "nt".
  const auto ops = run_ktune({"tune", "--kernel", "softmax", "--shape", "rows=4,cols=1000", "--layout", "nt",
                              "--compile-only", "--arch", "sm_90", "--db", db_});
  EXPECT_EQ(ops.exit_code, 2) << ops.err;
  EXPECT_NE(ops.err.find("softmax"), std::string::npos) << ops.err;
  EXPECT_NE(ops.err.find("causal"), std::string::npos) << ops.err;

  // query shares the check.
  const auto q = run_ktune({"query", "--kernel", "fp8_gemm", "--shape", "m=32,n=256,k=512", "--dtype",
                            "fp8e4m3", "--layout", "nn"});
  EXPECT_EQ(q.exit_code, 2) << q.err;
  EXPECT_NE(q.err.find("nt, nt+rowcol"), std::string::npos) << q.err;
}

TEST(TuneLayoutHelp, ListsEachKernelsLayoutsAndDefault) {
  for (const char* cmd : {"tune", "query"}) {
    const auto r = run_ktune({cmd, "--help"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("fp8_gemm: nt (default), nt+rowcol"), std::string::npos) << cmd << "\n" << r.out;
    EXPECT_NE(r.out.find("swiglu: fused (default), split"), std::string::npos) << cmd << "\n" << r.out;
    EXPECT_NE(r.out.find("softmax: \"\" (default), causal, padding"), std::string::npos) << cmd << "\n"
                                                                                         << r.out;
  }
}

}  // namespace
}  // namespace ktune::testing
