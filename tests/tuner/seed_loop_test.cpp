// Seeds through the tuning loop (fake compiler and measurer, no GPU): a budget smaller than the
// seeds measures only seeds, in file order; seeds the arch refuses are no seeds for that key.
#include <algorithm>

#include <gtest/gtest.h>

#include "kernel_templates/embedded_sources.hpp"
#include "tests/tuner/loop_test_util.hpp"
#include "tuner/inputs/shape_set.hpp"
#include "tuner/loop/tuning_loop.hpp"

namespace ktune::tuner {
namespace seed_loop_test {  // named: the unity build batches this file with others

const cache::GpuInfo kGpu{"Fake GPU", 9, 0, 132, int64_t{141} << 30, "{}"};

TuneKey key(int64_t m, const std::string& layout = "nt") {
  return {"gemm", NamedShape{"seeds", {{"m", m}, {"n", 4096}, {"k", 4096}}}, DType::kBF16, layout};
}

TuneOptions options(size_t budget, const std::string& kind) {
  TuneOptions o;
  o.strategy = kind;
  o.budget = budget;
  o.compile_threads = 2;
  o.counters = false;
  return o;
}

TEST(SeedLoop, ABudgetSmallerThanTheSeedsMeasuresOnlySeedsInFileOrder) {
  const auto space = ConfigSpace::load(configs_dir() / "spaces" / "gemm.toml");
  const auto sources = kernel_templates::SourceLibrary::builtin();
  for (std::string kind : {"model", "random", "exhaustive"}) {
    test::TempDir dir;
    auto db = cache::ConfigCache::open(dir / "s.db");
    test::FakeMeasurer measurer;
    LoopDeps deps{test::fake_compile(), &measurer, &sources, nullptr};
    KeySummary s;
    {
      TuningLoop loop(db, kGpu, cache::RunInfo{}, options(4, kind), deps);
      s = loop.tune(space, key(1));
    }
    ASSERT_TRUE(s.error.empty()) << s.error;
    // M = 1: 6 gemv and 5 mma seeds fit, the 6 wgmma and 3 wgmma_tma ones need M >= 128, and the
    // 7 mma_cluster ones would split 128 tiles of N = 4096 beyond twice the SMs.
    EXPECT_EQ(s.seeds, 11u);
    EXPECT_EQ(s.seed_rejected, 16u);
    EXPECT_EQ(s.evaluations, 4u);
    const std::vector<std::string> want = {
        "gemm.bf16.nt.gemv.k512.sk1.w4.r8", "gemm.bf16.nt.gemv.k512.sk1.w4.r4",
        "gemm.bf16.nt.gemv.k1024.sk1.w8.r4", "gemm.bf16.nt.gemv.k512.sk2.w4.r4"};
    std::vector<std::string> measured(measurer.measured.begin(), measurer.measured.end());
    std::sort(measured.begin(), measured.end());
    std::vector<std::string> sorted_want = want;
    std::sort(sorted_want.begin(), sorted_want.end());
    EXPECT_EQ(measured, sorted_want) << kind;
    const auto rows = test::all_measurements(db);
    ASSERT_GE(rows.size(), 4u);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(rows[i].m.config_name, want[i]) << kind;
  }
}

TEST(SeedLoop, SeedsTheArchRefusesAreDroppedForThatKey) {
  const auto space = ConfigSpace::load(configs_dir() / "spaces" / "gemm.toml");
  const auto sources = kernel_templates::SourceLibrary::builtin();
  for (const char* arch : {"sm_80", "sm_90"}) {
    test::TempDir dir;
    auto db = cache::ConfigCache::open(dir / "a.db");
    TuneOptions o = options(2, "random");
    o.compile_only = true;
    o.arch = arch;
    LoopDeps deps{test::fake_compile(), nullptr, &sources, nullptr};
    KeySummary s;
    {
      TuningLoop loop(db, kGpu, cache::RunInfo{}, o, deps);
      s = loop.tune(space, key(4096));
    }
    ASSERT_TRUE(s.error.empty()) << s.error;
    const auto rows = test::all_measurements(db);
    ASSERT_EQ(rows.size(), 2u);
    if (std::string(arch) == "sm_80") {
      // wgmma and wgmma_tma are sm_90 only: their 4 + 3 seeds are no seeds here (the 2 split-K
      // wgmma seeds none at M = 4096 anyway, nor the 7 mma_cluster ones); the one unsplit mma seed
      // leads.
      EXPECT_EQ(s.seeds, 1u);
      EXPECT_EQ(s.seed_rejected, 26u);
      EXPECT_EQ(rows[0].m.config_name, "gemm.bf16.nt.mma.16x32x128.w1x2.s5.sk1.a0.g1");
      EXPECT_EQ(rows[0].m.outcome, ktune::Outcome::kSkipped);
      EXPECT_EQ(rows[0].m.reason, "compile-only");
    } else {
      EXPECT_EQ(s.seeds, 8u);
      EXPECT_EQ(s.seed_rejected, 19u);
      EXPECT_EQ(rows[0].m.config_name, "gemm.bf16.nt.mma.16x32x128.w1x2.s5.sk1.a0.g1");
      EXPECT_EQ(rows[1].m.config_name, "gemm.bf16.nt.wgmma.128x256x64.s4.sk1.g8");
    }
  }
}

TEST(SeedLoop, AKeyTunedAfterItsSiblingLayoutMeasuresTheSiblingsWinnerFirst) {
  const auto space = ConfigSpace::load(configs_dir() / "spaces" / "gemm.toml");
  const auto sources = kernel_templates::SourceLibrary::builtin();
  test::TempDir dir;
  auto db = cache::ConfigCache::open(dir / "sib.db");
  test::FakeMeasurer measurer;
  LoopDeps deps{test::fake_compile(), &measurer, &sources, nullptr};
  KeySummary plain, biased, again;
  {
    TuningLoop loop(db, kGpu, cache::RunInfo{}, options(24, "random"), deps);
    // nothing tuned for this shape yet: the space's seeds lead, no sibling
    biased = loop.tune(space, key(16, "nt+silu"));
    plain = loop.tune(space, key(16));
  }
  ASSERT_TRUE(plain.error.empty()) << plain.error;
  ASSERT_TRUE(plain.winner.has_value());
  EXPECT_EQ(biased.sibling_seeds, 0u);
  // the plain key's winner is not the space's first seed, or the test would prove nothing
  const std::string first_seed = measurer.measured.front();
  ASSERT_NE(*plain.winner, "gemm.bf16.nt" + first_seed.substr(std::string("gemm.bf16.nt+silu").size()));
  // the plain key found the silu key's winner among its own candidates first
  EXPECT_EQ(plain.sibling_seeds, 1u);

  measurer.measured.clear();
  {
    TuningLoop loop(db, kGpu, cache::RunInfo{}, options(1, "random"), deps);
    again = loop.tune(space, key(16, "nt+bias"));
  }
  ASSERT_TRUE(again.error.empty()) << again.error;
  // two siblings tuned (nt, nt+silu): both winners lead, fastest first; a budget of 1 measures it
  EXPECT_EQ(again.sibling_seeds, 2u);
  ASSERT_EQ(measurer.measured.size(), 1u);
  const std::string tile = plain.winner->substr(std::string("gemm.bf16.nt").size());
  const std::string silu_tile = biased.winner->substr(std::string("gemm.bf16.nt+silu").size());
  const bool plain_faster = test::fake_time_us(*plain.winner) <= test::fake_time_us(*biased.winner);
  EXPECT_EQ(measurer.measured.front(), "gemm.bf16.nt+bias" + (plain_faster ? tile : silu_tile));
}

}  // namespace seed_loop_test
}  // namespace ktune::tuner
