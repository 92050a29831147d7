// Shards of a sweep (tuner/inputs/shard_spec.hpp, tuner/inputs/shard_plan.hpp): FNV-1a against its published
// test vectors; the partition puts every key in exactly one shard for N = 1..16, whatever order the
// keys come in, within the greedy rule's balance bound, and pinned assignments stay put across
// builds and machines; `--shard` text and the job-array environments parse or fail naming the bad
// part; a planned session's shards cover its keys once.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "ktune/error.hpp"
#include "tests/tuner/test_util.hpp"
#include "tuner/inputs/shape_set.hpp"
#include "tuner/inputs/shard_plan.hpp"
#include "tuner/inputs/shard_spec.hpp"

namespace ktune::tuner {
namespace {

TEST(Fnv1a64, MatchesThePublishedTestVectors) {
  // From the FNV reference (isthe.com/chongo/tech/comp/fnv, test vectors for FNV-1a 64).
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

/// Random keys with random costs (1..200 evaluations, some equal).
std::vector<ShardItem> random_items(std::mt19937& rng, size_t n) {
  std::uniform_int_distribution<int> cost(1, 200);
  std::uniform_int_distribution<int> m(1, 1 << 14);
  std::vector<ShardItem> items;
  std::set<std::string> seen;
  while (items.size() < n) {
    std::string key = "gemm|m=" + std::to_string(m(rng)) + ",n=4096,k=4096|bf16|nt";
    if (!seen.insert(key).second) continue;
    items.push_back({key, static_cast<double>(cost(rng) / 10 * 10 + 1)});  // many ties
  }
  return items;
}

TEST(ShardPartition, EveryKeyInExactlyOneShardBalancedByCostForOneToSixteenShards) {
  std::mt19937 rng(20261201);
  for (size_t n = 1; n <= 16; ++n) {
    const auto items = random_items(rng, 37 + 5 * n);
    const auto shard = partition_by_cost(items, n);
    ASSERT_EQ(shard.size(), items.size());
    std::vector<double> load(n, 0);
    for (size_t i = 0; i < items.size(); ++i) {
      ASSERT_LT(shard[i], n);
      load[shard[i]] += items[i].cost;
    }
    // Exactly one shard each: selecting shard by shard gives a disjoint cover.
    std::multiset<std::string> covered;
    for (size_t s = 0; s < n; ++s)
      for (size_t i = 0; i < items.size(); ++i)
        if (shard[i] == s) covered.insert(items[i].key);
    std::multiset<std::string> all;
    for (const auto& it : items) all.insert(it.key);
    EXPECT_EQ(covered, all) << n << " shards";
    // Greedy largest-first: no shard ends more than the largest cost above the mean.
    const double total = std::accumulate(load.begin(), load.end(), 0.0);
    double largest = 0;
    for (const auto& it : items) largest = std::max(largest, it.cost);
    for (size_t s = 0; s < n; ++s)
      EXPECT_LE(load[s], total / static_cast<double>(n) + largest) << "shard " << s << " of " << n;
  }
}

TEST(ShardPartition, CostNotCountDecides) {
  // One key as costly as the nine others together: with two shards it is alone in its shard.
  std::vector<ShardItem> items{{"big", 90}};
  for (int i = 0; i < 9; ++i) items.push_back({"small" + std::to_string(i), 10});
  const auto shard = partition_by_cost(items, 2);
  for (size_t i = 1; i < items.size(); ++i) EXPECT_NE(shard[i], shard[0]) << items[i].key;
}

TEST(ShardPartition, TheInputOrderDoesNotMatterAndEqualKeysShareAShard) {
  std::mt19937 rng(7);
  auto items = random_items(rng, 60);
  items.push_back(items[3]);  // a key listed twice
  const auto first = partition_by_cost(items, 5);
  EXPECT_EQ(first.back(), first[3]);
  std::map<std::string, size_t> by_key;
  for (size_t i = 0; i < items.size(); ++i) by_key[items[i].key] = first[i];
  for (int round = 0; round < 5; ++round) {
    std::shuffle(items.begin(), items.end(), rng);
    const auto again = partition_by_cost(items, 5);
    for (size_t i = 0; i < items.size(); ++i) EXPECT_EQ(again[i], by_key.at(items[i].key)) << items[i].key;
  }
}

TEST(ShardPartition, PinnedAssignmentsAreStable) {
  // Worked by hand from the rule (largest cost first; equal costs by FNV-1a, computed apart in
  // Python: m=1 before m=16, the residual rmsnorm before the plain one; each to the lightest shard,
  // the lowest index on a tie). A change here moves keys between the shards of arrays already
  // running, whose databases would then miss or repeat keys: change it only on purpose.
  const std::vector<ShardItem> items{
      {"gemm|m=16,n=4096,k=4096|bf16|nt", 120},         {"gemm|m=1,n=4096,k=4096|bf16|nt", 120},
      {"gemm|m=128,n=14336,k=4096|bf16|nt", 160},       {"rmsnorm|rows=16,hidden=4096|bf16|", 24},
      {"rmsnorm|rows=1,hidden=4096|bf16|residual", 24}, {"softmax|rows=32,cols=32000|f16|causal", 40},
      {"swiglu|m=16,i=14336|bf16|fused", 30},           {"fp8_gemm|m=64,n=4096,k=4096|fp8e4m3|nt", 90},
  };
  // 3 shards: 160 -> 0; 120 (m=1) -> 1; 120 (m=16) -> 2; 90 -> 1 (210); 40 -> 2 (160); 30 -> 0 (190);
  // 24, 24 -> 2 (184), 2 (208).
  EXPECT_EQ(partition_by_cost(items, 3), (std::vector<size_t>{2, 1, 0, 2, 2, 2, 0, 1}));
  // 4 shards: 160 -> 0; 120 -> 1; 120 -> 2; 90 -> 3; 40 -> 3 (130); 30 -> 1 (150); 24 (residual)
  // -> 2 (144); 24 -> 3 (154).
  EXPECT_EQ(partition_by_cost(items, 4), (std::vector<size_t>{2, 1, 0, 3, 2, 3, 1, 3}));
  EXPECT_EQ(fnv1a64("gemm|m=16,n=4096,k=4096|bf16|nt"), 0x2c534fa859a7343eULL);
}

TEST(ShardPartition, ZeroShardsIsBadInput) { EXPECT_THROW(partition_by_cost({{"a", 1}}, 0), Error); }

/// An environment of the given variables only.
EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

/// The message of parse_shard's kBadInput error ("" when it does not throw one).
std::string shard_error(const std::string& text, std::optional<size_t> count = std::nullopt,
                        std::map<std::string, std::string> vars = {}) {
  try {
    parse_shard(text, count, env_of(std::move(vars)));
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
    return e.what();
  }
  return "";
}

TEST(ShardSpec, ExplicitIndexOverCount) {
  const ShardSpec s = parse_shard("3/8", std::nullopt, env_of({}));
  EXPECT_EQ(s.index, 3u);
  EXPECT_EQ(s.count, 8u);
  EXPECT_EQ(s.text(), "3/8");
  EXPECT_EQ(parse_shard("0/1", std::nullopt, env_of({})).whole(), true);
  EXPECT_NE(shard_error("4/4").find("shard index 4 is not below the shard count 4"), std::string::npos);
  EXPECT_NE(shard_error("1/0").find("at least 1"), std::string::npos);
  EXPECT_NE(shard_error("3").find("expected I/N"), std::string::npos);
  EXPECT_NE(shard_error("a/4").find("the index 'a'"), std::string::npos);
  EXPECT_NE(shard_error("-1/4").find("the index '-1'"), std::string::npos);
  EXPECT_NE(shard_error("1/four").find("the count 'four'"), std::string::npos);
  EXPECT_NE(shard_error("1/4", 4).find("--shard-count goes with --shard auto"), std::string::npos);
}

TEST(ShardSpec, AutoReadsSlurmArraysIncludingOnesNotStartingAtZero) {
  auto s = parse_shard("auto", std::nullopt,
                       env_of({{"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}));
  EXPECT_EQ(s.text(), "5/8");
  // --array=2-9: ids 2..9 are shards 0..7.
  s = parse_shard(
      "auto", std::nullopt,
      env_of({{"SLURM_ARRAY_TASK_ID", "9"}, {"SLURM_ARRAY_TASK_COUNT", "8"}, {"SLURM_ARRAY_TASK_MIN", "2"}}));
  EXPECT_EQ(s.text(), "7/8");
  EXPECT_NE(s.source.find("SLURM_ARRAY_TASK_ID=9"), std::string::npos) << s.source;
  // --array=1-7:2: ids 1,3,5,7 are shards 0..3.
  s = parse_shard("auto", std::nullopt,
                  env_of({{"SLURM_ARRAY_TASK_ID", "5"},
                          {"SLURM_ARRAY_TASK_COUNT", "4"},
                          {"SLURM_ARRAY_TASK_MIN", "1"},
                          {"SLURM_ARRAY_TASK_STEP", "2"}}));
  EXPECT_EQ(s.text(), "2/4");
  EXPECT_NE(
      shard_error("auto", std::nullopt, {{"SLURM_ARRAY_TASK_ID", "3"}}).find("SLURM_ARRAY_TASK_COUNT is not"),
      std::string::npos);
  // An array given as a list (--array=1,3,9): 9 - 1 is past the count.
  EXPECT_NE(
      shard_error(
          "auto", std::nullopt,
          {{"SLURM_ARRAY_TASK_ID", "9"}, {"SLURM_ARRAY_TASK_COUNT", "3"}, {"SLURM_ARRAY_TASK_MIN", "1"}})
          .find("not below the shard count 3"),
      std::string::npos);
  EXPECT_NE(shard_error("auto", std::nullopt, {{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "3"}})
                .find("SLURM_ARRAY_TASK_ID='x'"),
            std::string::npos);
  EXPECT_NE(shard_error("auto", 4, {{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "3"}})
                .find("disagrees"),
            std::string::npos);
}

TEST(ShardSpec, AutoReadsKubernetesIndexedJobsWithACount) {
  EXPECT_EQ(parse_shard("auto", 4, env_of({{"JOB_COMPLETION_INDEX", "3"}})).text(), "3/4");
  EXPECT_EQ(
      parse_shard("auto", std::nullopt, env_of({{"JOB_COMPLETION_INDEX", "0"}, {"KTUNE_SHARD_COUNT", "2"}}))
          .text(),
      "0/2");
  // --shard-count wins over the variable.
  EXPECT_EQ(
      parse_shard("auto", 6, env_of({{"JOB_COMPLETION_INDEX", "5"}, {"KTUNE_SHARD_COUNT", "2"}})).text(),
      "5/6");
  EXPECT_NE(shard_error("auto", std::nullopt, {{"JOB_COMPLETION_INDEX", "1"}}).find("no shard count"),
            std::string::npos);
  EXPECT_NE(shard_error("auto", 2, {{"JOB_COMPLETION_INDEX", "2"}}).find("not below the shard count 2"),
            std::string::npos);
  EXPECT_NE(shard_error("auto", 0, {{"JOB_COMPLETION_INDEX", "0"}}).find("at least 1"), std::string::npos);
}

TEST(ShardSpec, AutoWithoutAnArrayEnvironmentSaysWhatItReads) {
  const std::string e = shard_error("auto");
  EXPECT_NE(e.find("SLURM_ARRAY_TASK_ID"), std::string::npos) << e;
  EXPECT_NE(e.find("JOB_COMPLETION_INDEX"), std::string::npos) << e;
  EXPECT_NE(e.find("--shard I/N"), std::string::npos) << e;
}

class ShardSession : public ::testing::Test {
 protected:
  void SetUp() override { setenv("KTUNE_CONFIGS_DIR", test::source_configs().c_str(), 1); }
};

TEST_F(ShardSession, ThePresetsShardsCoverItsKeysOnce) {
  // The keys are costed once a preset (enumerating every key's space is the expensive part); quick's
  // first shard of each count also through the one-call form, which must select the same.
  for (const auto& [preset, counts] : {std::pair<const char*, std::vector<size_t>>{"llm-decode", {4}},
                                       std::pair<const char*, std::vector<size_t>>{"quick", {1, 3, 7}}}) {
    TuneOptions options;
    SessionRequest request;
    request.preset = preset;
    const auto jobs = plan_session(request, options);
    const std::vector<ShardItem> items = shard_items(jobs, options);
    std::multiset<std::string> all;
    for (const auto& job : jobs)
      for (const auto& key : job.keys) all.insert(shard_key_text(key, job.space.dims()));
    const std::set<std::string> distinct(all.begin(), all.end());
    for (size_t n : counts) {
      std::multiset<std::string> covered;
      double cost = 0;
      double cost_total = 0;
      for (size_t i = 0; i < n; ++i) {
        const ShardSelection sel = select_shard(jobs, items, {i, n, "test"});
        if (i == 0 && std::string(preset) == "quick") {
          const ShardSelection direct = select_shard(jobs, {i, n, "test"}, options);
          EXPECT_EQ(direct.keys, sel.keys);
          EXPECT_DOUBLE_EQ(direct.cost, sel.cost);
        }
        EXPECT_EQ(sel.keys_total, distinct.size());
        size_t keys = 0;
        for (const auto& job : sel.jobs)
          for (const auto& key : job.keys) {
            covered.insert(shard_key_text(key, job.space.dims()));
            ++keys;
          }
        EXPECT_EQ(keys, sel.keys);
        cost += sel.cost;
        cost_total = sel.cost_total;
      }
      EXPECT_EQ(covered, std::multiset<std::string>(distinct.begin(), distinct.end()))
          << preset << " in " << n;
      EXPECT_GT(cost_total, 0);
      EXPECT_DOUBLE_EQ(cost, cost_total);
    }
  }
}

}  // namespace
}  // namespace ktune::tuner
