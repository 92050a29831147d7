// cuBLASLt's algorithms as candidates on a GPU (tuner/library/library_candidates.hpp): the heuristic offers
// algorithms for decode and prefill shapes of both layouts, bf16, f16, f32 and fp8; each, as a library call
// in the real worker, is verified against the gemm reference and timed (ok, with statistics); an algorithm of
// another library version is refused before it runs; and a tuning loop over a key measures the
// library's algorithms beside the templates and stores them under their versioned names.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness/cublaslt_algorithm.hpp"
#include "harness/device_info.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "runtime/cache_compile_store.hpp"
#include "tests/tuner/gpu_test_util.hpp"
#include "tests/tuner/loop_test_util.hpp"
#include "tuner/inputs/shape_set.hpp"
#include "tuner/library/cublaslt_algorithm_source.hpp"
#include "tuner/library/library_candidates.hpp"
#include "tuner/loop/candidate_measurer.hpp"
#include "tuner/loop/tuning_loop.hpp"
#include "tuner/space/device_limits.hpp"

namespace ktune::tuner {
namespace {

namespace kt = kernel_templates;

kt::Problem problem(int64_t m, int64_t n, int64_t k, DType dtype, const char* layout) {
  return kt::Problem{{{"m", m}, {"n", n}, {"k", k}}, dtype, layout};
}

const char* kernel_of(const kt::Problem& p) { return p.dtype == DType::kFP8E4M3 ? "fp8_gemm" : "gemm"; }

harness::CompileResult compile_reference(const kt::Problem& p) {
  const harness::DeviceInfo dev = harness::query_device(0);
  static const auto sources = kt::SourceLibrary::builtin();
  harness::NvrtcCompiler compiler;
  const kt::CompileSpec cs = library_reference_spec(kernel_of(p), p).reference(p).compile;
  return compiler.compile(kt::make_compile_request(cs, sources, dev.arch()));
}

measure::TimingOptions short_timing() {
  measure::TimingOptions t;
  t.max_time_ms = 20;
  t.warmup_min_ms = 2;
  return t;
}

TEST(LibraryGpu, EveryOfferedAlgorithmIsVerifiedAndTimedInTheWorker) {
  KTUNE_SKIP_WITHOUT_GPU();
  gpu_test::use_ktune_binary();
  CublasLtAlgorithmSource source(0);
  RunnerMeasurer measurer(0);
  const kt::Problem problems[] = {
      problem(16, 4096, 1024, DType::kBF16, "nt"),    problem(37, 301, 515, DType::kBF16, "nn"),
      problem(512, 3072, 1024, DType::kF16, "nt"),    problem(33, 257, 129, DType::kF32, "nt"),
      problem(16, 4096, 1024, DType::kFP8E4M3, "nt"), problem(1024, 2048, 4096, DType::kFP8E4M3, "nt")};
  for (const kt::Problem& p : problems) {
    SCOPED_TRACE(p.shape_text() + " " + to_string(p.dtype) + " " + p.layout);
    const std::vector<Config> configs = source.configs(kernel_of(p), p, 8);
    ASSERT_FALSE(configs.empty()) << "cuBLASLt offered no algorithm";
    const harness::CompileResult reference = compile_reference(p);
    for (const Config& c : configs) {
      measure::CandidateRequest r = library_candidate_request(kernel_of(p), p, c, reference);
      r.timing = short_timing();
      const measure::CandidateResult res = measurer.measure(r);
      EXPECT_EQ(res.outcome, Outcome::kOk) << r.name << ": " << res.reason;
      if (res.outcome != Outcome::kOk) continue;
      EXPECT_TRUE(res.stats.has_value()) << r.name;
      EXPECT_GE(res.rel_err, 0) << r.name << " was not verified";
      EXPECT_EQ(res.resources.value("algorithm", ""),
                harness::CublasLtAlgorithm::from_config(c).name_suffix());
    }
  }
}

TEST(LibraryGpu, AnAlgorithmOfAnotherLibraryVersionIsRefusedNotRun) {
  KTUNE_SKIP_WITHOUT_GPU();
  gpu_test::use_ktune_binary();
  CublasLtAlgorithmSource source(0);
  RunnerMeasurer measurer(0);
  const kt::Problem p = problem(64, 1024, 512, DType::kBF16, "nt");
  std::vector<Config> configs = source.configs("gemm", p, 1);
  ASSERT_FALSE(configs.empty());
  Config stale = configs.front();
  stale.set("VERSION", stale.at("VERSION") - 1);
  measure::CandidateRequest r = library_candidate_request("gemm", p, stale, compile_reference(p));
  r.timing = short_timing();
  const measure::CandidateResult res = measurer.measure(r);
  EXPECT_EQ(res.outcome, Outcome::kExceedsLimits) << res.reason;
  EXPECT_NE(res.reason.find("offered by cuBLASLt"), std::string::npos) << res.reason;
}

TEST(LibraryGpu, ALoopMeasuresTheLibraryBesideTheTemplates) {
  KTUNE_SKIP_WITHOUT_GPU();
  gpu_test::use_ktune_binary();
  test::TempDir dir;
  auto db = cache::ConfigCache::open(dir / "gpu.db");
  const harness::DeviceInfo dev = harness::query_device(0);
  const auto sources = kt::SourceLibrary::builtin();
  runtime::CacheCompileStore store(db, "gemm");
  harness::NvrtcCompiler compiler(&store);
  RunnerMeasurer measurer(0);
  CublasLtAlgorithmSource library(0);
  TuneOptions o;
  o.strategy = "random";
  o.budget = 8;
  o.arch = dev.arch();
  o.limits = device_limits(dev);
  o.timing = short_timing();
  o.counters = false;
  LoopDeps deps{[&](const harness::CompileRequest& r) { return compiler.compile(r); },
                &measurer,
                &sources,
                nullptr,
                nullptr,
                nullptr,
                &library};
  TuningLoop loop(db, {dev.name, dev.cc_major, dev.cc_minor, dev.sm_count, dev.memory_bytes, "{}"}, {}, o,
                  deps);
  const ConfigSpace space = ConfigSpace::load(configs_dir() / "spaces" / "gemm.toml");
  const KeySummary s =
      loop.tune(space, {"gemm", NamedShape{"", {{"m", 16}, {"n", 2048}, {"k", 1024}}}, DType::kBF16, "nt"});
  ASSERT_TRUE(s.error.empty()) << s.error;
  EXPECT_GT(s.library_candidates, 0u);
  ASSERT_TRUE(s.winner.has_value());
  size_t library_ok = 0;
  for (const auto& r : test::all_measurements(db)) {
    if (r.m.config_name.find(".cublaslt.v") == std::string::npos) continue;
    EXPECT_EQ(r.m.outcome, Outcome::kOk) << r.m.config_name << ": " << r.m.reason;
    if (r.m.outcome == Outcome::kOk) ++library_ok;
    EXPECT_TRUE(harness::is_cublaslt_config(Config::from_json_text(r.m.config_json))) << r.m.config_json;
  }
  EXPECT_GE(library_ok, s.library_candidates);
}

}  // namespace
}  // namespace ktune::tuner
