// Seed configs (`seeds = [...]` in a space template): read and checked at load, kept or dropped per
// shape by the constraints, and proposed first by every strategy within the budget.
#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "test_util.hpp"
#include "tuner/search/search_strategy.hpp"
#include "tuner/space/config_space.hpp"

namespace ktune::tuner {
namespace seed_configs_test {  // named: the unity build batches this file with others

using test::expect_bad_input;

/// A one-template space with seeds on lines 7-9; `extra_seed` (line 10) may be a bad one.
std::string seeded_space(const std::string& extra_seed = {}) {
  return "kernel = \"toy\"\n"         // 1
         "dims = [\"m\"]\n"           // 2
         "[[template]]\n"             // 3
         "name = \"t\"\n"             // 4
         "pattern = \"a{A}.b{B}\"\n"  // 5
         "seeds = [\n"                // 6
         "  { A = 8, B = 3 },\n"      // 7
         "  { B = 5, A = 2 },\n"      // 8
         "  { A = 16, B = 7 },\n"     // 9
         + extra_seed +
         "\n"                        // 10
         "]\n"                       // 11
         "[template.params]\n"       // 12
         "A = [1, 2, 4, 8, 16]\n"    // 13
         "B = [3, 5, 7]\n"           // 14
         "[template.constraints]\n"  // 15
         "fits = \"A * B <= m\"\n";  // 16
}

ProblemContext ctx(int64_t m) {
  ProblemContext c;
  c.dims = {{"m", m}};
  c.elem_bytes = 2;
  return c;
}

Config tc(int64_t a, int64_t b) { return Config("t", {{"A", a}, {"B", b}}); }

TEST(SeedConfigs, ReadInFileOrderWithTheTemplatesParameterOrder) {
  const auto space = ConfigSpace::parse(seeded_space(), "s.toml");
  EXPECT_EQ(space.templates()[0].seeds, (std::vector<Config>{tc(8, 3), tc(2, 5), tc(16, 7)}));
  // Seeds are part of the space's points, not additions to it.
  EXPECT_EQ(space.size(), 15u);
}

TEST(SeedConfigs, ARejectedSeedIsDroppedForThatShapeOnly) {
  const auto space = ConfigSpace::parse(seeded_space(), "s.toml");
  // m = 37: 8*3 = 24 and 2*5 = 10 fit, 16*7 = 112 does not.
  const auto small = space.enumerate(ctx(37));
  EXPECT_EQ(small.seeds, (std::vector<Config>{tc(8, 3), tc(2, 5)}));
  EXPECT_EQ(small.seed_rejected, 1u);
  EXPECT_NE(small.summary().find("seeds 2, seed_rejected 1"), std::string::npos) << small.summary();
  // Enumeration order and the kept set do not change: the seeds are among the configs.
  for (const auto& s : small.seeds)
    EXPECT_NE(std::find(small.configs.begin(), small.configs.end(), s), small.configs.end());
  EXPECT_EQ(small.configs.front(), tc(1, 3));
  // m = 113 keeps all three.
  const auto big = space.enumerate(ctx(113));
  EXPECT_EQ(big.seeds.size(), 3u);
  EXPECT_EQ(big.seed_rejected, 0u);
  // A space without seeds says nothing about them.
  EXPECT_EQ(ConfigSpace::parse("kernel = \"toy\"\ndims = [\"m\"]\n[[template]]\nname = \"t\"\n"
                               "pattern = \"a{A}\"\n[template.params]\nA = [1, 3]\n",
                               "n.toml")
                .enumerate(ctx(5))
                .summary()
                .find("seed"),
            std::string::npos);
}

TEST(SeedConfigs, BadSeedsNameFileLineAndPart) {
  expect_bad_input([] { ConfigSpace::parse(seeded_space("  { A = 4, B = 3, C = 1 },"), "bad.toml"); },
                   {"bad.toml:10:", "seed 4 of template 't'", "unknown parameter 'C'"});
  expect_bad_input([] { ConfigSpace::parse(seeded_space("  { A = 4, B = 9 },"), "bad.toml"); },
                   {"bad.toml:10:", "seed 4", "B = 9", "not one of the parameter's values"});
  expect_bad_input([] { ConfigSpace::parse(seeded_space("  { A = 4 },"), "bad.toml"); },
                   {"bad.toml:10:", "seed 4", "lacks parameter 'B'"});
  expect_bad_input([] { ConfigSpace::parse(seeded_space("  { B = 3, A = 8 },"), "bad.toml"); },
                   {"bad.toml:10:", "seed 4", "repeats an earlier seed"});
  expect_bad_input([] { ConfigSpace::parse(seeded_space("  { A = \"4\", B = 3 },"), "bad.toml"); },
                   {"bad.toml:10:", "seed 4", "A must be an integer"});
  expect_bad_input([] { ConfigSpace::parse(seeded_space("  7,"), "bad.toml"); },
                   {"bad.toml:10:", "seed 4", "must be a table"});
  try {
    ConfigSpace::parse(seeded_space("  { A = 4, B = 9 },"), "bad.toml");
  } catch (const Error& e) {
    EXPECT_EQ(exit_code(e.kind()), 2);
    EXPECT_EQ(e.where(), "bad.toml:10");
  }
}

/// 600 candidates of one template in a fixed order, and 5 seeds among them (one repeated, one
/// that is no candidate: it must be ignored).
struct Fixture {
  std::vector<Config> candidates;
  std::vector<Config> seeds;
  std::vector<Config> distinct_seeds;
  Fixture() {
    for (int64_t a = 1; a <= 30; ++a) {
      for (int64_t b = 1; b <= 20; ++b)
        candidates.emplace_back("t", std::vector<Config::Param>{{"A", a}, {"B", b}});
    }
    std::mt19937 rng(1234);
    std::uniform_int_distribution<size_t> pick(0, candidates.size() - 1);
    while (distinct_seeds.size() < 4) {
      const Config& c = candidates[pick(rng)];
      if (std::find(distinct_seeds.begin(), distinct_seeds.end(), c) == distinct_seeds.end())
        distinct_seeds.push_back(c);
    }
    seeds = distinct_seeds;
    seeds.insert(seeds.begin() + 2, Config("t", {{"A", 99}, {"B", 99}}));  // not a candidate
    seeds.push_back(distinct_seeds[1]);                                    // repeated
  }
};

/// A time per config that never makes a seed the fastest by construction (random, positive).
double fake_time(const Config& c) {
  return 3.0 + static_cast<double>((c.at("A") * 7919 + c.at("B") * 104729) % 1000) / 37.0;
}

/// Drives `s` in batches of `batch`, reporting fake times; returns every proposal in order.
std::vector<Candidate> drive(SearchStrategy& s, size_t batch) {
  std::vector<Candidate> proposed;
  for (int guard = 0; !s.done() && guard < 100000; ++guard) {
    const auto b = s.next_batch(batch);
    if (b.empty()) break;
    for (const auto& c : b) {
      proposed.push_back(c);
      s.report(c.config, fake_time(c.config), c.fidelity);
    }
  }
  EXPECT_TRUE(s.done()) << s.name();
  return proposed;
}

const char* const kAllKinds[] = {"exhaustive", "random", "halving", "model"};

TEST(SeedConfigs, EveryStrategyProposesTheSeedsFirst) {
  const Fixture f;
  for (std::string kind : kAllKinds) {
    for (size_t budget : {size_t{30}, size_t{100}}) {
      StrategyOptions o;
      o.budget = budget;
      o.seed = 77;
      o.seeds = f.seeds;
      auto s = make_strategy(kind, f.candidates, o);
      const auto proposed = drive(*s, 3);  // batches smaller than the seed count
      ASSERT_GE(proposed.size(), f.distinct_seeds.size()) << kind;
      for (size_t i = 0; i < f.distinct_seeds.size(); ++i)
        EXPECT_EQ(proposed[i].config, f.distinct_seeds[i]) << kind << " budget " << budget << " #" << i;
      EXPECT_LE(proposed.size(), budget) << kind;
    }
  }
}

TEST(SeedConfigs, ExhaustiveKeepsTheSetAndPutsSeedsFirst) {
  const Fixture f;
  StrategyOptions o;
  o.seeds = f.seeds;
  auto s = make_strategy("exhaustive", f.candidates, o);
  const auto proposed = drive(*s, 16);
  ASSERT_EQ(proposed.size(), f.candidates.size());
  std::set<std::string> keys;
  for (const auto& c : proposed) keys.insert(c.config.key());
  EXPECT_EQ(keys.size(), f.candidates.size());  // each candidate once
  // After the seeds: enumeration order without them.
  std::vector<Config> rest;
  for (const auto& c : f.candidates) {
    if (std::find(f.distinct_seeds.begin(), f.distinct_seeds.end(), c) == f.distinct_seeds.end())
      rest.push_back(c);
  }
  for (size_t i = 0; i < rest.size(); ++i) EXPECT_EQ(proposed[f.distinct_seeds.size() + i].config, rest[i]);
}

TEST(SeedConfigs, ABudgetSmallerThanTheSeedsEvaluatesOnlySeeds) {
  const Fixture f;
  for (std::string kind : kAllKinds) {
    StrategyOptions o;
    o.budget = 3;
    o.seeds = f.seeds;
    auto s = make_strategy(kind, f.candidates, o);
    const auto proposed = drive(*s, 8);
    ASSERT_FALSE(proposed.empty()) << kind;
    EXPECT_LE(proposed.size(), 3u) << kind;
    std::set<std::string> seed_keys;
    for (const auto& c : f.distinct_seeds) seed_keys.insert(c.key());
    for (const auto& c : proposed)
      EXPECT_TRUE(seed_keys.contains(c.config.key())) << kind << " " << c.config.key();
    ASSERT_TRUE(s->best().has_value());
    EXPECT_TRUE(seed_keys.contains(s->best()->config.key()));
  }
}

TEST(SeedConfigs, WithoutSeedsTheOrderIsUnchanged) {
  const Fixture f;
  for (std::string kind : kAllKinds) {
    StrategyOptions plain;
    plain.budget = 40;
    StrategyOptions ignored = plain;
    ignored.seeds = {Config("t", {{"A", 99}, {"B", 99}})};  // no candidate: nothing changes
    auto a = make_strategy(kind, f.candidates, plain);
    auto b = make_strategy(kind, f.candidates, ignored);
    const auto pa = drive(*a, 4);
    const auto pb = drive(*b, 4);
    ASSERT_EQ(pa.size(), pb.size()) << kind;
    for (size_t i = 0; i < pa.size(); ++i) EXPECT_EQ(pa[i].config, pb[i].config) << kind;
  }
}

/// The shipped gemm space's seeds at three H200 shapes (bf16, nt): kept by the constraints and
/// accepted by each template's spec and for sm_90.
/// A bf16 "nt" GEMM of m x n x k, as the space sees it.
ProblemContext bf16_nt_gemm(int64_t m, int64_t n, int64_t k) {
  ProblemContext c;
  c.dims = {{"m", m}, {"n", n}, {"k", k}};
  c.elem_bytes = 2;
  c.dtype = DType::kBF16;
  c.layout = "nt";
  return c;
}

TEST(SeedConfigs, GemmSpaceSeedsPerShape) {
  const auto space = ConfigSpace::load(test::source_configs() / "spaces" / "gemm.toml");
  const std::map<int64_t, std::map<std::string, size_t>> want = {
      // The 7 mma_cluster seeds are for narrow layers: at N = 4096 their splits would put more than
      // twice the SMs' blocks on the grid, so none is kept (SeedConfigs.ClusterSeedsServeNarrowLayers).
      {1, {{"gemv", 6}, {"mma", 5}}},
      {16, {{"gemv", 6}, {"mma", 5}}},
      // M = 128: few tiles, so the two split-K wgmma seeds join the unsplit ones; two mma seeds
      // pass the constraints too.
      {128, {{"mma", 2}, {"wgmma", 6}, {"wgmma_tma", 3}}},
      // The one unsplit mma seed (16x32x128, SWIZZLE 1) passes every constraint at M = 4096 too;
      // the split-K wgmma seeds do not (2048+ tiles).
      {4096, {{"mma", 1}, {"wgmma", 4}, {"wgmma_tma", 3}}},
  };
  size_t seeds_in_file = 0;
  for (const auto& t : space.templates()) seeds_in_file += t.seeds.size();
  EXPECT_EQ(seeds_in_file, 27u);
  for (const auto& [m, per_template] : want) {
    const ProblemContext c = bf16_nt_gemm(m, 4096, 4096);
    const auto e = space.enumerate(c);
    std::map<std::string, size_t> got;
    const kernel_templates::Problem problem{c.dims, ktune::DType::kBF16, "nt"};
    for (const auto& s : e.seeds) {
      ++got[s.variant];
      const auto& spec = kernel_templates::find_spec("gemm", s.variant);
      const auto& kc = s;
      EXPECT_FALSE(spec.rejection(problem, kc).has_value()) << s.key();
      EXPECT_FALSE(spec.arch_rejection("sm_90").has_value()) << s.key();
    }
    EXPECT_EQ(got, per_template) << "m=" << m << ": " << e.summary();
    EXPECT_EQ(e.seeds.size() + e.seed_rejected, seeds_in_file) << "m=" << m;
  }
}

// The cluster split-K seeds reach a small model's narrow, long-K layer (Qwen3-0.6B down_proj,
// N = 1024, K = 3072): at M = 16 the four 16-row ones (the 32-row ones need M > 16); at M = 32 the
// three 32-row ones and the 16-row one with SPLIT_K 4 (with 8, 64 tiles would make 512 blocks);
// none from M = 128.
TEST(SeedConfigs, ClusterSeedsServeNarrowLayers) {
  const auto space = ConfigSpace::load(test::source_configs() / "spaces" / "gemm.toml");
  for (const auto& [m, want] : std::vector<std::pair<int64_t, size_t>>{{16, 4}, {32, 4}, {128, 0}}) {
    const ProblemContext c = bf16_nt_gemm(m, 1024, 3072);
    const auto e = space.enumerate(c);
    const kernel_templates::Problem problem{c.dims, ktune::DType::kBF16, "nt"};
    size_t got = 0;
    for (const auto& s : e.seeds) {
      if (s.variant != "mma_cluster") continue;
      ++got;
      EXPECT_FALSE(kernel_templates::find_spec("gemm", s.variant).rejection(problem, s).has_value())
          << s.key();
    }
    EXPECT_EQ(got, want) << "m=" << m << ": " << e.summary();
  }
}

}  // namespace seed_configs_test
}  // namespace ktune::tuner
