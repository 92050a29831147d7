// `ktune tune --shard` and `ktune cache merge` end to end (compile-only: NVRTC, no GPU): four shards
// of a sweep, merged, hold exactly the unsharded sweep's rows (GPU, kernel, shape, dtype, layout,
// config); merging a shard again adds nothing; a shard compiled for another target is reported by
// the merge; `--shard auto` reads Slurm's and Kubernetes' variables; bad shards exit 2 before any
// database is written.

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "tests/cli/ktune_runner.hpp"
#include "tests/cli/test_db_fixture.hpp"

namespace ktune::testing {
namespace tune_shards_e2e_test {  // named: the unity build batches this file with others

// Two rmsnorm configs: 2 compiles a key.
constexpr const char* kSpace = R"TOML(
kernel = "rmsnorm"
dims = ["rows", "hidden"]
description = "two rmsnorm configs (tune_shards_e2e_test)"
[[template]]
name = "rowwise"
layouts = ["", "residual"]
[template.params]
THREADS = [64, 256]
ROWS = [1]
VEC = [4]
REG = [0]
)TOML";

using Row = std::tuple<std::string, std::string, std::string, std::string, std::string, std::string>;

std::multiset<Row> rows_of(const std::string& db_path) {
  std::multiset<Row> rows;
  auto db = cache::ConfigCache::open(db_path, cache::ConfigCache::Mode::kReadOnly);
  db.for_each_measurement({}, [&](const cache::StoredMeasurement& m) {
    rows.insert({m.gpu.name, m.kernel.name, m.m.shape, to_string(m.m.dtype), m.m.layout, m.m.config_name});
  });
  return rows;
}

class TuneShards : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(space_) << kSpace; }
  /// The sweep: 5 shapes x 2 dtypes = 10 keys, 20 compiles.
  std::vector<std::string> sweep(const std::string& db, std::vector<std::string> extra = {},
                                 const std::string& arch = "sm_90") const {
    std::vector<std::string> args{
        "tune",    "--kernel",       "rmsnorm", "--space", space_.string(),     "--dtype",
        "f32,f16", "--compile-only", "--arch",  arch,      "--compile-threads", "1",
        "--json",  "--db",           db};
    for (const char* s : {"rows=1,hidden=4096", "rows=7,hidden=1024", "rows=64,hidden=3584",
                          "rows=512,hidden=4095", "rows=4096,hidden=4096"}) {
      args.push_back("--shape");
      args.push_back(s);
    }
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  std::string db(const std::string& name) const { return (dir_ / name).string(); }

  TempDir dir_;
  std::filesystem::path space_ = dir_ / "rms2.toml";
};

TEST_F(TuneShards, FourShardsMergedEqualTheUnshardedSweepAndMergingAgainAddsNothing) {
  const auto whole = run_ktune(sweep(db("whole.db")));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const auto want = rows_of(db("whole.db"));
  ASSERT_EQ(want.size(), 20u);

  std::vector<std::string> shards;
  size_t keys = 0;
  for (int i = 0; i < 4; ++i) {
    shards.push_back(db("shard" + std::to_string(i) + ".db"));
    const auto r = run_ktune(sweep(shards.back(), {"--shard", std::to_string(i) + "/4"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc.at("shard").at("index"), i);
    EXPECT_EQ(doc.at("shard").at("count"), 4);
    EXPECT_EQ(doc.at("shard").at("keys_total"), 10);
    EXPECT_EQ(doc.at("keys").size(), doc.at("shard").at("keys").get<size_t>());
    EXPECT_GE(doc.at("keys").size(), 2u) << "10 equal-cost keys over 4 shards: 2 or 3 each";
    EXPECT_LE(doc.at("keys").size(), 3u);
    keys += doc.at("keys").size();
  }
  EXPECT_EQ(keys, 10u);

  std::vector<std::string> merge{"cache", "merge", "--db", db("merged.db"), "--json"};
  merge.insert(merge.end(), shards.begin(), shards.end());
  const auto m = run_ktune(merge);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_EQ(nlohmann::json::parse(m.out).at("measurements_added"), 20);
  EXPECT_TRUE(nlohmann::json::parse(m.out).at("warnings").empty());
  EXPECT_EQ(rows_of(db("merged.db")), want);

  // The same shards again, and one of them a third time: nothing added.
  const auto again = run_ktune(merge);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out).at("measurements_added"), 0);
  EXPECT_EQ(nlohmann::json::parse(again.out).at("measurements_skipped"), 20);
  const auto once_more = run_ktune({"cache", "merge", "--db", db("merged.db"), "--json", shards[2]});
  ASSERT_EQ(once_more.exit_code, 0) << once_more.err;
  EXPECT_EQ(nlohmann::json::parse(once_more.out).at("measurements_added"), 0);
  EXPECT_EQ(rows_of(db("merged.db")), want);

  // A shard run for another target: merged apart, and reported.
  const auto other = run_ktune(sweep(db("other.db"), {"--shard", "1/4"}, "sm_80"));
  ASSERT_EQ(other.exit_code, 0) << other.err;
  const auto mixed =
      run_ktune({"cache", "merge", "--db", db("mixed.db"), "--json", shards[0], db("other.db")});
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  const auto warnings = nlohmann::json::parse(mixed.out).at("warnings");
  ASSERT_EQ(warnings.size(), 1u) << mixed.out;
  EXPECT_NE(warnings[0].get<std::string>().find("compile-only sm_80"), std::string::npos) << warnings;
  EXPECT_NE(mixed.err.find("warning"), std::string::npos) << mixed.err;
  EXPECT_NE(mixed.err.find("other.db"), std::string::npos) << mixed.err;
}

TEST_F(TuneShards, AutoReadsTheArrayEnvironment) {
  // Slurm array --array=2-5: task 4 is shard 2 of 4.
  const auto slurm = run_ktune(sweep(db("slurm.db"), {"--shard", "auto"}), {{"SLURM_ARRAY_TASK_ID", "4"},
                                                                            {"SLURM_ARRAY_TASK_COUNT", "4"},
                                                                            {"SLURM_ARRAY_TASK_MIN", "2"},
                                                                            {"JOB_COMPLETION_INDEX", ""}});
  ASSERT_EQ(slurm.exit_code, 0) << slurm.err;
  const auto slurm_doc = nlohmann::json::parse(slurm.out);
  EXPECT_EQ(slurm_doc.at("shard").at("index"), 2);
  EXPECT_EQ(slurm_doc.at("shard").at("count"), 4);
  // The same shard given by hand holds the same keys.
  const auto by_hand = run_ktune(sweep(db("hand.db"), {"--shard", "2/4"}));
  ASSERT_EQ(by_hand.exit_code, 0) << by_hand.err;
  EXPECT_EQ(rows_of(db("slurm.db")), rows_of(db("hand.db")));

  const auto k8s =
      run_ktune(sweep(db("k8s.db"), {"--shard", "auto"}),
                {{"SLURM_ARRAY_TASK_ID", ""}, {"JOB_COMPLETION_INDEX", "3"}, {"KTUNE_SHARD_COUNT", "4"}});
  ASSERT_EQ(k8s.exit_code, 0) << k8s.err;
  EXPECT_EQ(nlohmann::json::parse(k8s.out).at("shard").at("index"), 3);
}

TEST_F(TuneShards, BadShardsExit2NamingTheProblemAndWriteNothing) {
  const std::vector<std::pair<std::string, std::string>> no_array{
      {"SLURM_ARRAY_TASK_ID", ""}, {"JOB_COMPLETION_INDEX", ""}, {"KTUNE_SHARD_COUNT", ""}};
  struct Case {
    std::vector<std::string> extra;
    const char* says;
  };
  for (const Case& c :
       {Case{{"--shard", "4/4"}, "shard index 4 is not below the shard count 4"},
        Case{{"--shard", "0/0"}, "at least 1"}, Case{{"--shard", "two/4"}, "the index 'two'"},
        Case{{"--shard", "auto"}, "found no array index"},
        Case{{"--shard", "2/4", "--shard-count", "4"}, "--shard-count goes with --shard auto"},
        Case{{"--shard-count", "4"}, "--shard-count requires --shard"}}) {
    const auto r = run_ktune(sweep(db("bad.db"), c.extra), no_array);
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(std::filesystem::exists(db("bad.db"))) << c.says;
  }
  const auto k8s = run_ktune(sweep(db("bad.db"), {"--shard", "auto"}),
                             {{"JOB_COMPLETION_INDEX", "1"}, {"KTUNE_SHARD_COUNT", ""}});
  EXPECT_EQ(k8s.exit_code, 2) << k8s.err;
  EXPECT_NE(k8s.err.find("no shard count"), std::string::npos) << k8s.err;
}

TEST(TuneShardsHelp, ExplainsShardAndShardCount) {
  const auto r = run_ktune({"tune", "--help"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--shard"), std::string::npos);
  EXPECT_NE(r.out.find("SLURM_ARRAY_TASK_ID"), std::string::npos);
  EXPECT_NE(r.out.find("--shard-count"), std::string::npos);
  EXPECT_NE(r.out.find("ktune cache merge"), std::string::npos);
}

}  // namespace tune_shards_e2e_test
}  // namespace ktune::testing
