// gpu: every sampled gemm config (both templates, three dtypes, both layouts, with and without the
// bias / SiLU epilogue) against the GPU reference on random data at odd shapes (M, N, K multiples of no tile;
// K not divisible by SPLIT_K * BLOCK_K; splits that get no K tile) and round ones; the GPU reference against
// the CPU float64 reference on small shapes (D4); split-K bit-identical over repeated runs; misaligned
// pointers (the scalar paths). Skips with the reason when there is no GPU.

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <memory>

#include "gemm_samples.hpp"
#include "gpu_plan_runner.hpp"
#include "harness/context.hpp"
#include "harness/device_info.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "measure/tolerance.hpp"
#include "measure/verification.hpp"

namespace ktune::kernel_templates {
namespace {

using testing::DeviceTensors;
using testing::gemm_dtypes;
using testing::gemm_problem;
using testing::KernelCache;

testing::GpuSession& gpu() { return testing::gpu_session(); }

class GemmGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu().context) GTEST_SKIP() << gpu().skip_reason;
    gpu().context->make_current();
  }
};

/// One problem's inputs on the device and on the host, and its GPU reference output.
struct Fixture {
  Problem problem;
  DeviceTensors tensors;
  HostTensors host;
  std::vector<double> c_ref;
};

/// Uploads random inputs ("a" and "b" misaligned by one element when `misalign`) and runs the GPU
/// reference into "c_ref".
std::unique_ptr<Fixture> make_fixture(const Problem& problem, uint64_t seed, bool misalign = false) {
  auto f = std::make_unique<Fixture>();
  f->problem = problem;
  const KernelSpec& any = *specs_of("gemm").front();
  const ReferenceSpec ref = any.reference(problem);
  const std::size_t offset = misalign ? ktune::size_of(problem.dtype) : 0;
  for (const auto& t : ref.plan.tensors) {
    f->tensors.ensure(t, t.role == TensorRole::kInput ? offset : 0);
    if (t.role == TensorRole::kInput) {
      f->tensors.upload(t.name, testing::random_tensor(t.dtype, t.elements, seed++, f->host[t.name]));
    } else {
      f->tensors.poison(t.name);
    }
  }
  testing::run_plan(*gpu().kernels, ref.compile, ref.plan, f->tensors);
  const auto& c_ref = ref.plan.tensors[static_cast<std::size_t>(ref.plan.tensor_index("c_ref"))];
  const auto raw = f->tensors.download("c_ref", static_cast<std::size_t>(c_ref.bytes()));
  f->c_ref = ktune::decode(DType::kF32, std::as_bytes(std::span(raw)));
  return f;
}

/// Runs (spec, config) on the fixture's inputs with poisoned outputs and workspace; returns the raw
/// bytes of "c".
std::vector<uint8_t> run_candidate(Fixture& f, const KernelSpec& spec, const Config& config) {
  const CompileSpec compile = spec.compile_spec(f.problem, config);
  const LaunchPlan plan = spec.launch_plan(f.problem, config);
  for (const auto& t : plan.tensors) {
    f.tensors.ensure(t);
    if (t.role != TensorRole::kInput) f.tensors.poison(t.name);
  }
  testing::run_plan(*gpu().kernels, compile, plan, f.tensors);
  const auto& c = plan.tensors[static_cast<std::size_t>(plan.tensor_index("c"))];
  return f.tensors.download("c", static_cast<std::size_t>(c.bytes()));
}

/// Verifies (spec, config) against the fixture's GPU reference with the dtype's tolerance.
void expect_matches_reference(Fixture& f, const KernelSpec& spec, const Config& config) {
  const std::string label = spec.canonical_name(f.problem, config) + " @ " + f.problem.shape_text();
  if (auto why = spec.rejection(f.problem, config)) {
    ADD_FAILURE() << label << " rejected: " << *why;
    return;
  }
  try {
    const auto bytes = run_candidate(f, spec, config);
    const auto out = ktune::decode(f.problem.dtype, std::as_bytes(std::span(bytes)));
    const measure::Verdict v =
        measure::judge(measure::compare(out, f.c_ref), measure::tolerance_for(f.problem.dtype));
    EXPECT_TRUE(v.ok) << label << ": " << v.reason;
  } catch (const Error& e) {
    ADD_FAILURE() << label << ": " << e.what() << "\n" << e.detail();
  }
}

void prefetch(const KernelSpec& spec, const Problem& p, const std::vector<Config>& configs) {
  for (const auto& c : configs) {
    if (!spec.rejection(p, c)) gpu().kernels->prefetch(spec.compile_spec(p, c));
  }
  gpu().kernels->prefetch(spec.reference(p).compile);
}

TEST_F(GemmGpu, GpuReferenceMatchesCpuFloat64) {
  const KernelSpec& spec = find_spec("gemm", "tiled");
  const int64_t shapes[][3] = {{37, 29, 53}, {1, 65, 130}, {16, 16, 16}, {5, 3, 1}, {70, 1, 300}};
  for (DType dtype : gemm_dtypes()) {
    for (const char* layout : {"nt", "nn"}) {
      for (const auto& s : shapes) {
        const Problem p = gemm_problem(s[0], s[1], s[2], dtype, layout);
        auto f = make_fixture(p, 1000 + static_cast<uint64_t>(s[2]));
        const HostTensors cpu = spec.cpu_reference(p, f->host);
        const measure::ErrorMetrics m = measure::compare(f->c_ref, cpu.at("c"));
        // Products of 8-bit-significand values are exact in f32 and sums below 2^8 need at most 24
        // bits, so f32 accumulation is nearly exact here; 1e-5 is 10x under the f32 tolerance.
        EXPECT_LT(m.rel_err, 1e-5) << p.shape_text() << " " << layout;
        EXPECT_EQ(m.nonfinite_ref + m.nonfinite_out, 0u);
        EXPECT_EQ(m.count, static_cast<uint64_t>(s[0] * s[1]));
      }
    }
  }
}

TEST_F(GemmGpu, TiledSampleMatchesReference) {
  const KernelSpec& spec = find_spec("gemm", "tiled");
  // Odd: no tile divides M, N or K, and 331 = 10 * 32 + 11 is divisible by no SPLIT_K * BLOCK_K;
  // (3, 200, 40) gives most splits of SK 8 no K tile at all; round: powers of two.
  const int64_t shapes[][3] = {{77, 93, 331}, {3, 200, 40}, {128, 256, 512}};
  const auto configs = testing::tiled_samples();
  for (DType dtype : gemm_dtypes()) {
    for (const char* layout : {"nt", "nn"}) {
      for (const auto& s : shapes) prefetch(spec, gemm_problem(s[0], s[1], s[2], dtype, layout), configs);
    }
  }
  for (DType dtype : gemm_dtypes()) {
    for (const char* layout : {"nt", "nn"}) {
      for (const auto& s : shapes) {
        auto f = make_fixture(gemm_problem(s[0], s[1], s[2], dtype, layout), 17);
        for (const Config& c : configs) expect_matches_reference(*f, spec, c);
      }
    }
  }
}

TEST_F(GemmGpu, GemvSampleMatchesReference) {
  const KernelSpec& spec = find_spec("gemm", "gemv");
  // K 4096: round; 1000: vector path with a partial last chunk; 999: scalar path (K % 8, K % 4 != 0).
  const int64_t shapes[][3] = {
      {1, 1001, 4096}, {3, 1001, 1000}, {16, 515, 999}, {8, 4096, 4096}, {5, 7, 2200}};
  const auto configs = testing::gemv_samples();
  for (DType dtype : gemm_dtypes()) {
    for (const auto& s : shapes) prefetch(spec, gemm_problem(s[0], s[1], s[2], dtype, "nt"), configs);
  }
  for (DType dtype : gemm_dtypes()) {
    for (const auto& s : shapes) {
      auto f = make_fixture(gemm_problem(s[0], s[1], s[2], dtype, "nt"), 29);
      for (const Config& c : configs) expect_matches_reference(*f, spec, c);
    }
  }
}

TEST_F(GemmGpu, EpilogueReferenceMatchesCpuFloat64) {
  const KernelSpec& spec = find_spec("gemm", "tiled");
  const int64_t shapes[][3] = {{37, 29, 53}, {1, 65, 130}, {5, 3, 1}};
  for (DType dtype : gemm_dtypes()) {
    for (const char* layout : {"nt+bias", "nn+silu", "nt+bias+silu"}) {
      for (const auto& s : shapes) {
        const Problem p = gemm_problem(s[0], s[1], s[2], dtype, layout);
        auto f = make_fixture(p, 1300 + static_cast<uint64_t>(s[2]));
        const HostTensors cpu = spec.cpu_reference(p, f->host);
        const measure::ErrorMetrics m = measure::compare(f->c_ref, cpu.at("c"));
        // Exact products, f32 sums, then f32 expf: 1e-5 is 10x under the f32 tolerance.
        EXPECT_LT(m.rel_err, 1e-5) << p.shape_text() << " " << ktune::to_string(dtype) << " " << layout;
        EXPECT_EQ(m.count, static_cast<uint64_t>(s[0] * s[1]));
      }
    }
  }
}

/// Every config of `configs` on every (dtype, layout, shape) against the GPU reference, compiled
/// first in one batch.
void expect_configs_match(const KernelSpec& spec, const std::vector<std::array<int64_t, 3>>& shapes,
                          const std::vector<const char*>& layouts, const std::vector<Config>& configs,
                          uint64_t seed) {
  for (DType dtype : gemm_dtypes()) {
    for (const char* layout : layouts) {
      for (const auto& s : shapes) prefetch(spec, gemm_problem(s[0], s[1], s[2], dtype, layout), configs);
    }
  }
  for (DType dtype : gemm_dtypes()) {
    for (const char* layout : layouts) {
      for (const auto& s : shapes) {
        auto f = make_fixture(gemm_problem(s[0], s[1], s[2], dtype, layout), seed);
        for (const Config& c : configs) expect_matches_reference(*f, spec, c);
      }
    }
  }
}

TEST_F(GemmGpu, TiledEpiloguesMatchReference) {
  // Every form beyond the plain ones, with and without split-K (the epilogue in the kernel, or in
  // ktune_gemm_finish after the ordered sum), at an odd and a split-starved shape.
  expect_configs_match(find_spec("gemm", "tiled"), {{77, 93, 331}, {3, 200, 40}},
                       {"nt+bias", "nn+bias", "nt+silu", "nn+silu", "nt+bias+silu", "nn+bias+silu"},
                       testing::tiled_samples(), 19);
}

TEST_F(GemmGpu, GemvEpiloguesMatchReference) {
  // Qwen2.5-0.5B's biased qkv projection at decode (m 1, n 1152, k 896), the vector path with a
  // partial chunk, the scalar path.
  expect_configs_match(find_spec("gemm", "gemv"), {{1, 1152, 896}, {3, 1001, 1000}, {16, 515, 999}},
                       {"nt+bias", "nt+silu", "nt+bias+silu"}, testing::gemv_samples(), 37);
}

TEST_F(GemmGpu, MisalignedPointersTakeTheScalarPaths) {
  // A and B one element past 16-byte alignment, K a multiple of every vector width: only the
  // pointer check can send the kernels to their scalar paths (AlignmentRule::required is false).
  for (DType dtype : {DType::kBF16, DType::kF32}) {
    auto f = make_fixture(gemm_problem(9, 130, 1024, dtype, "nt"), 41, /*misalign=*/true);
    ASSERT_NE(f->tensors.ptr("a") % 16, 0u);
    expect_matches_reference(*f, find_spec("gemm", "tiled"), testing::tiled_samples()[2]);
    expect_matches_reference(*f, find_spec("gemm", "gemv"), testing::gemv_samples()[1]);
  }
}

TEST_F(GemmGpu, SplitKIsBitIdenticalOverRuns) {
  struct Case {
    const char* variant;
    Config config;
    Problem problem;
  };
  const std::vector<Case> cases = {
      {"tiled", testing::tiled_samples()[2], gemm_problem(77, 93, 4099, DType::kBF16, "nt")},
      {"tiled", testing::tiled_samples()[4], gemm_problem(33, 300, 2000, DType::kF32, "nn")},
      {"gemv", testing::gemv_samples()[5], gemm_problem(4, 1001, 8192, DType::kF16, "nt")},
  };
  for (const auto& c : cases) {
    const KernelSpec& spec = find_spec("gemm", c.variant);
    ASSERT_GT(c.config.at("SPLIT_K"), 1);
    auto f = make_fixture(c.problem, 53);
    const auto first = run_candidate(*f, spec, c.config);
    for (int run = 0; run < 3; ++run) {
      EXPECT_EQ(run_candidate(*f, spec, c.config), first)
          << spec.canonical_name(c.problem, c.config) << " run " << run;
    }
  }
}

}  // namespace
}  // namespace ktune::kernel_templates
