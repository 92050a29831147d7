// The tuning loop on a GPU, through the real worker: every sampled config of odd and round gemm
// shapes that compiles is verified against the reference (ok, or a stated non-ok outcome with its
// reason; never silently wrong), and the winner is stored. Split-K configs (deterministic and
// atomic) run as their whole launch sequence.

#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "harness/device_info.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "runtime/cache_compile_store.hpp"
#include "tests/tuner/gpu_test_util.hpp"
#include "tests/tuner/loop_test_util.hpp"
#include "tuner/loop/candidate_measurer.hpp"
#include "tuner/loop/tuning_loop.hpp"
#include "tuner/space/device_limits.hpp"

namespace ktune::tuner {
namespace {

struct Case {
  int64_t m, n, k;
  DType dtype;
  const char* layout;
};

TEST(LoopGpu, EverySampledConfigIsVerifiedAtOddAndRoundShapes) {
  KTUNE_SKIP_WITHOUT_GPU();
  gpu_test::use_ktune_binary();
  test::TempDir dir;
  auto db = cache::ConfigCache::open(dir / "gpu.db");
  const harness::DeviceInfo dev = harness::query_device(0);
  const auto sources = kernel_templates::SourceLibrary::builtin();
  runtime::CacheCompileStore store(db, "gemm");
  harness::NvrtcCompiler compiler(&store);
  RunnerMeasurer measurer(0);
  TuneOptions o;
  o.strategy = "random";
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
  const Case cases[] = {{37, 301, 515, DType::kBF16, "nt"},
                        {7, 333, 1001, DType::kBF16, "nt"},
                        {37, 301, 515, DType::kF32, "nn"},
                        {16, 4096, 4096, DType::kBF16, "nt"},
                        {128, 1024, 1024, DType::kBF16, "nn"}};
  for (const Case& c : cases) {
    const KeySummary s =
        loop.tune(space, {"gemm", NamedShape{"", {{"m", c.m}, {"n", c.n}, {"k", c.k}}}, c.dtype, c.layout});
    const std::string what = s.shape + " " + to_string(c.dtype) + " " + c.layout;
    ASSERT_TRUE(s.error.empty()) << what << ": " << s.error;
    EXPECT_EQ(s.evaluations, std::min<size_t>(24, s.candidates)) << what;
    EXPECT_GT(s.outcomes.count("ok") ? s.outcomes.at("ok") : 0, 0u) << what;
    ASSERT_TRUE(s.winner.has_value()) << what;
  }
  std::map<std::string, int> bad;
  for (const auto& r : test::all_measurements(db)) {
    const auto& m = r.m;
    if (m.outcome == ktune::Outcome::kOk) {
      EXPECT_TRUE(m.stats.has_value()) << m.config_name;
      continue;
    }
    EXPECT_FALSE(m.reason.empty()) << m.config_name << " " << ktune::to_string(m.outcome)
                                   << " without a reason";
    if (m.outcome != ktune::Outcome::kExceedsLimits && m.outcome != ktune::Outcome::kSkipped) {
      ++bad[std::string(ktune::to_string(m.outcome))];
      ADD_FAILURE() << m.shape << " " << m.config_name << ": " << ktune::to_string(m.outcome) << ": "
                    << m.reason;
    }
  }
  EXPECT_TRUE(bad.empty());
}

// Split-K configs of every gemm template, deterministic and atomic, one config each (the loop's
// exhaustive sweep of this small space): each runs through the worker as its whole launch sequence.
constexpr const char* kSplitKSpace = R"TOML(
kernel = "gemm"
dims = ["m", "n", "k"]
description = "split-K configs of every gemm template (loop_gpu_test)"

[[template]]
name = "tiled"
layouts = ["nt", "nn"]
[template.params]
BLOCK_M = [32]
BLOCK_N = [64]
BLOCK_K = [32]
WARPS_M = [2]
WARPS_N = [2]
STAGES = [2]
SPLIT_K = [1, 3, 4]
[template.constraints]
split_k_fits = "SPLIT_K * BLOCK_K <= k"

[[template]]
name = "gemv"
layouts = ["nt"]
[template.params]
BLOCK_K = [256]
SPLIT_K = [1, 3]
WARPS = [4]
ROWS_PER_BLOCK = [2]
[template.constraints]
skinny = "m <= 16"
split_k_fits = "SPLIT_K * BLOCK_K <= k"

[[template]]
name = "mma"
layouts = ["nt", "nn"]
[template.params]
BLOCK_M = [32]
BLOCK_N = [64]
BLOCK_K = [32]
WARPS_M = [2]
WARPS_N = [2]
STAGES = [3]
SPLIT_K = [1, 3, 4]
SPLIT_K_MODE = [0, 1]
SWIZZLE = [1]
[template.constraints]
half_precision = "elem_bytes == 2"
atomic_needs_split = "SPLIT_K > 1 || SPLIT_K_MODE == 0"
split_k_fits = "SPLIT_K * BLOCK_K <= k"
)TOML";

TEST(LoopGpu, SplitKConfigsRunThroughTheWorkerAsWholeSequencesAndAreVerified) {
  KTUNE_SKIP_WITHOUT_GPU();
  gpu_test::use_ktune_binary();
  test::TempDir dir;
  auto db = cache::ConfigCache::open(dir / "splitk.db");
  const harness::DeviceInfo dev = harness::query_device(0);
  const auto sources = kernel_templates::SourceLibrary::builtin();
  runtime::CacheCompileStore store(db, "gemm");
  harness::NvrtcCompiler compiler(&store);
  RunnerMeasurer measurer(0);
  TuneOptions o;
  o.strategy = "exhaustive";
  o.arch = dev.arch();
  o.limits = device_limits(dev);
  o.counters = false;
  o.timing.max_time_ms = 20;
  o.timing.warmup_min_ms = 2;
  LoopDeps deps{[&](const harness::CompileRequest& r) { return compiler.compile(r); }, &measurer, &sources,
                nullptr};
  TuningLoop loop(db, {dev.name, dev.cc_major, dev.cc_minor, dev.sm_count, dev.memory_bytes, "{}"}, {}, o,
                  deps);
  const ConfigSpace space = ConfigSpace::parse(kSplitKSpace, "split-k space");
  // Odd shapes (K not a multiple of SPLIT_K * BLOCK_K; M, N not of the tiles) and a decode shape.
  const Case cases[] = {{7, 333, 1001, DType::kBF16, "nt"},
                        {37, 301, 515, DType::kF16, "nn"},
                        {37, 301, 515, DType::kF32, "nt"},
                        {16, 4096, 4096, DType::kBF16, "nt"}};
  for (const Case& c : cases) {
    const KeySummary s =
        loop.tune(space, {"gemm", NamedShape{"", {{"m", c.m}, {"n", c.n}, {"k", c.k}}}, c.dtype, c.layout});
    ASSERT_TRUE(s.error.empty()) << s.shape << " " << to_string(c.dtype) << ": " << s.error;
    EXPECT_EQ(s.unmeasurable, 0u);
    EXPECT_EQ(s.evaluations, s.candidates);
  }
  // Launches per config: 1 unsplit, 2 deterministic split-K (GEMM + reduction), 3 atomic (zero first).
  std::map<std::string, int> ok_by_kind;
  for (const auto& r : test::all_measurements(db)) {
    const auto& m = r.m;
    const bool split = !(m.config_name.ends_with(".sk1") || m.config_name.find(".sk1.") != std::string::npos);
    const bool atomic = m.config_name.find(".a1.") != std::string::npos;
    EXPECT_EQ(ktune::to_string(m.outcome), "ok") << m.shape << " " << m.config_name << ": " << m.reason;
    if (m.outcome != ktune::Outcome::kOk) continue;
    const auto res = nlohmann::json::parse(m.resources_json);
    const int launches = res.at("launches").get<int>();
    EXPECT_EQ(launches, !split ? 1 : atomic ? 3 : 2) << m.config_name;
    if (split) {
      // The worker loaded and checked every launch of the sequence.
      EXPECT_EQ(res.at("worker_launches").size(), static_cast<size_t>(launches)) << m.resources_json;
      const std::string kind = m.config_name.find(".gemv.") != std::string::npos ? "gemv"
                               : m.config_name.find(".mma.") != std::string::npos
                                   ? (atomic ? "mma.a1" : "mma.a0")
                                   : "tiled";
      ++ok_by_kind[kind];
    }
  }
  for (const char* kind : {"tiled", "gemv", "mma.a0", "mma.a1"})
    EXPECT_GT(ok_by_kind[kind], 0) << "no verified split-K " << kind << " config";
}

}  // namespace
}  // namespace ktune::tuner
