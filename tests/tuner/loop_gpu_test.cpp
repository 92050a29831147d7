// The tuning loop on a GPU, through the real worker: every sampled config of odd and round gemm
// shapes that compiles is verified against the reference (ok, or a stated non-ok outcome with its
// reason; never silently wrong), and the winner is stored.

#include <gtest/gtest.h>

#include <map>

#include "harness/device_info.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "tests/tuner/gpu_test_util.hpp"
#include "tests/tuner/loop_test_util.hpp"
#include "tuner/cache_compile_store.hpp"
#include "tuner/candidate_measurer.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/tuning_loop.hpp"

namespace ktune::tuner {
namespace {

struct Case {
  int64_t m, n, k;
  const char* dtype;
  const char* layout;
};

TEST(LoopGpu, EverySampledConfigIsVerifiedAtOddAndRoundShapes) {
  KTUNE_SKIP_WITHOUT_GPU();
  gpu_test::use_ktune_binary();
  test::TempDir dir;
  auto db = cache::ConfigCache::open(dir / "gpu.db");
  const harness::DeviceInfo dev = harness::query_device(0);
  const auto sources = kernel_templates::SourceLibrary::builtin();
  CacheCompileStore store(db, "gemm");
  harness::NvrtcCompiler compiler(&store);
  RunnerMeasurer measurer(0);
  TuneOptions o;
  o.strategy = StrategyKind::kRandom;
  o.budget = 24;
  o.arch = dev.arch();
  o.limits = device_limits(dev);
  o.timing.max_time_ms = 20;  // verification is what this test is about; timing may be short
  o.timing.warmup_min_ms = 2;
  LoopDeps deps{[&](const harness::CompileRequest& r) { return compiler.compile(r); }, &measurer, &sources,
                nullptr};
  TuningLoop loop(db, {dev.name, dev.cc_major, dev.cc_minor, dev.sm_count, dev.memory_bytes, "{}"}, {}, o,
                  deps);
  const ConfigSpace space = ConfigSpace::load(configs_dir() / "spaces" / "gemm.toml");

  // Odd: no dimension a multiple of any tile; K not divisible by SPLIT_K * BLOCK_K. Round: model shapes.
  const Case cases[] = {{37, 301, 515, "bf16", "nt"},
                        {7, 333, 1001, "bf16", "nt"},
                        {37, 301, 515, "f32", "nn"},
                        {16, 4096, 4096, "bf16", "nt"},
                        {128, 1024, 1024, "bf16", "nn"}};
  for (const Case& c : cases) {
    const KeySummary s =
        loop.tune(space, {"gemm", NamedShape{"", {{"m", c.m}, {"n", c.n}, {"k", c.k}}}, c.dtype, c.layout});
    const std::string what = s.shape + " " + c.dtype + " " + c.layout;
    ASSERT_TRUE(s.error.empty()) << what << ": " << s.error;
    EXPECT_EQ(s.evaluations, std::min<size_t>(24, s.candidates)) << what;
    EXPECT_GT(s.outcomes.count("ok") ? s.outcomes.at("ok") : 0, 0u) << what;
    ASSERT_TRUE(s.winner.has_value()) << what;
  }
  std::map<std::string, int> bad;
  for (const auto& r : test::all_measurements(db)) {
    const auto& m = r.m;
    if (m.outcome == cache::Outcome::kOk) {
      EXPECT_TRUE(m.stats.has_value()) << m.config_name;
      continue;
    }
    EXPECT_FALSE(m.reason.empty()) << m.config_name << " " << cache::to_string(m.outcome)
                                   << " without a reason";
    if (m.outcome != cache::Outcome::kExceedsLimits && m.outcome != cache::Outcome::kSkipped) {
      ++bad[std::string(cache::to_string(m.outcome))];
      ADD_FAILURE() << m.shape << " " << m.config_name << ": " << cache::to_string(m.outcome) << ": "
                    << m.reason;
    }
  }
  EXPECT_TRUE(bad.empty());
}

}  // namespace
}  // namespace ktune::tuner
