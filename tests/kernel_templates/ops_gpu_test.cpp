// gpu: every sampled operator config (rmsnorm rowwise and bulk, rmsnorm_rope, rope_append, softmax, swiglu;
// three dtypes; every mode) against the GPU reference on random data at odd sizes (hidden 4095, 37, cols
// 1000, 262144 online) and round ones; each GPU reference against the CPU float64 reference on small shapes
// (D4); misaligned pointers (the per-element paths); positions as the harness's random bit
// patterns. Skips with the reason when there is no GPU.

#include <gtest/gtest.h>

#include <memory>

#include "gpu_plan_runner.hpp"
#include "harness/context.hpp"
#include "harness/device_info.hpp"
#include "kernel_templates/rope_append/rope_append_spec.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "measure/tolerance.hpp"
#include "measure/verification.hpp"
#include "ops_gpu_support.hpp"
#include "ops_samples.hpp"

namespace ktune::kernel_templates {
namespace {

using testing::DeviceTensors;
using testing::KernelCache;

testing::GpuSession& gpu() { return testing::gpu_session(); }

class OpsGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu().context) GTEST_SKIP() << gpu().skip_reason;
    gpu().context->make_current();
  }
};

/// One problem's inputs (device and host) and its GPU reference outputs by name.
struct Fixture {
  Problem problem;
  DeviceTensors tensors;
  HostTensors host;
  HostTensors ref;
};

std::unique_ptr<Fixture> make_fixture(const KernelSpec& spec, const Problem& problem, uint64_t seed,
                                      std::size_t misalign_bytes = 0) {
  auto f = std::make_unique<Fixture>();
  f->problem = problem;
  const ReferenceSpec ref = spec.reference(problem);
  testing::fill_inputs(problem, ref.plan.tensors, f->tensors, f->host, seed, misalign_bytes);
  testing::run_plan(*gpu().kernels, ref.compile, ref.plan, f->tensors);
  for (const auto& [out, ref_name] : ref.compare) {
    const auto& t = ref.plan.tensors[static_cast<std::size_t>(ref.plan.tensor_index(ref_name))];
    f->ref[out] = testing::download_values(f->tensors, t);
  }
  return f;
}

/// Runs (spec, config) on the fixture's inputs with poisoned outputs; compares every output with
/// the reference at the dtype's tolerance. Returns false when the config is rejected.
bool expect_matches_reference(Fixture& f, const KernelSpec& spec, const Config& config) {
  if (spec.rejection(f.problem, config)) return false;
  const std::string label = spec.canonical_name(f.problem, config) + " @ " + f.problem.shape_text();
  try {
    const CompileSpec compile = spec.compile_spec(f.problem, config);
    const LaunchPlan plan = spec.launch_plan(f.problem, config);
    for (const auto& t : plan.tensors) {
      f.tensors.ensure(t);
      if (t.role != TensorRole::kInput) f.tensors.poison(t.name);
    }
    testing::run_plan(*gpu().kernels, compile, plan, f.tensors);
    for (const auto& [out, want] : f.ref) {
      const auto& t = plan.tensors[static_cast<std::size_t>(plan.tensor_index(out))];
      const auto got = testing::download_values(f.tensors, t);
      const measure::Verdict v =
          measure::judge(measure::compare(got, want), measure::tolerance_for(f.problem.dtype));
      EXPECT_TRUE(v.ok) << label << " output " << out << ": " << v.reason;
    }
  } catch (const Error& e) {
    ADD_FAILURE() << label << ": " << e.what() << "\n" << e.detail();
  }
  return true;
}

/// Every sample on every (problem): compiles ahead on the pool, then verifies; each problem must
/// accept at least one sample.
void verify_samples(const KernelSpec& spec, const std::vector<Problem>& problems,
                    const std::function<std::vector<Config>(DType)>& samples) {
  for (const Problem& p : problems) {
    for (const Config& c : samples(p.dtype)) {
      if (!spec.rejection(p, c)) gpu().kernels->prefetch(spec.compile_spec(p, c));
    }
    gpu().kernels->prefetch(spec.reference(p).compile);
  }
  uint64_t seed = 100;
  for (const Problem& p : problems) {
    auto f = make_fixture(spec, p, seed++);
    int accepted = 0;
    for (const Config& c : samples(p.dtype)) accepted += expect_matches_reference(*f, spec, c) ? 1 : 0;
    EXPECT_GT(accepted, 0) << spec.kernel() << " @ " << p.shape_text() << ": no sample accepted";
  }
}

std::vector<Problem> with_dtypes_and_modes(
    const std::vector<std::vector<std::pair<std::string, int64_t>>>& shapes,
    const std::vector<std::string>& modes) {
  std::vector<Problem> out;
  for (DType t : testing::ops_dtypes()) {
    for (const auto& m : modes) {
      for (const auto& s : shapes) out.push_back({s, t, m});
    }
  }
  return out;
}

TEST_F(OpsGpu, RmsNormSamplesMatchReference) {
  const auto problems = with_dtypes_and_modes({{{"rows", 1}, {"hidden", 4096}},
                                               {{"rows", 7}, {"hidden", 4095}},
                                               {{"rows", 33}, {"hidden", 37}},
                                               {{"rows", 130}, {"hidden", 8192}},
                                               {{"rows", 5}, {"hidden", 1000}}},
                                              {"", "residual"});
  verify_samples(find_spec("rmsnorm", "rowwise"), problems, testing::rmsnorm_samples);
}

// The bulk variant (sm_90): hidden * sizeof(T) a multiple of 16; rows that leave the last block
// partial, rows shorter than a block's vectors.
TEST_F(OpsGpu, RmsNormBulkSamplesMatchReference) {
  const KernelSpec& spec = find_spec("rmsnorm", "bulk");
  const std::string arch = harness::query_device(0).arch();
  if (auto why = spec.arch_rejection(arch)) GTEST_SKIP() << *why;
  const auto problems = with_dtypes_and_modes({{{"rows", 1}, {"hidden", 4096}},
                                               {{"rows", 37}, {"hidden", 1032}},
                                               {{"rows", 130}, {"hidden", 8192}},
                                               {{"rows", 9}, {"hidden", 40}}},
                                              {"", "residual"});
  verify_samples(spec, problems, testing::rmsnorm_bulk_samples);
}

TEST_F(OpsGpu, RmsNormRopeSamplesMatchReference) {
  const auto problems =
      with_dtypes_and_modes({{{"tokens", 1}, {"heads_q", 32}, {"heads_kv", 8}, {"head_dim", 128}},
                             {{"tokens", 7}, {"heads_q", 16}, {"heads_kv", 8}, {"head_dim", 64}},
                             {{"tokens", 5}, {"heads_q", 28}, {"heads_kv", 4}, {"head_dim", 128}},
                             {{"tokens", 3}, {"heads_q", 5}, {"heads_kv", 1}, {"head_dim", 256}}},
                            {"neox", "gptj"});
  verify_samples(find_spec("rmsnorm_rope", "headwise"), problems,
                 [](DType) { return testing::rope_samples(); });
}

// Every mode (pairing, q/k norm, paged), full and partial rotary, Qwen2.5 / Llama / Qwen3 / GLM-4
// heads, a partial last block.
TEST_F(OpsGpu, RopeAppendSamplesMatchReference) {
  const RopeAppendSpec spec;
  auto shape = [](int64_t t, int64_t hq, int64_t hk, int64_t d, int64_t r) {
    return std::vector<std::pair<std::string, int64_t>>{
        {"tokens", t}, {"heads_q", hq}, {"heads_kv", hk}, {"head_dim", d}, {"rot_dim", r}};
  };
  const auto problems =
      with_dtypes_and_modes({shape(1, 14, 2, 64, 64), shape(8, 32, 8, 64, 64), shape(5, 16, 8, 128, 128),
                             shape(3, 32, 2, 128, 64), shape(130, 5, 1, 256, 128)},
                            spec.layouts());
  verify_samples(find_spec("rope_append", "headwise"), problems,
                 [](DType) { return testing::rope_append_samples(); });
}

// The bulk variant (sm_90): every head_dim, both pairings, heads that do not fill the lane groups,
// a partial last block.
TEST_F(OpsGpu, RmsNormRopeBulkMatchesReference) {
  const KernelSpec& spec = find_spec("rmsnorm_rope", "bulk");
  if (auto why = spec.arch_rejection(harness::query_device(0).arch())) GTEST_SKIP() << *why;
  const auto problems =
      with_dtypes_and_modes({{{"tokens", 1}, {"heads_q", 32}, {"heads_kv", 8}, {"head_dim", 128}},
                             {{"tokens", 7}, {"heads_q", 16}, {"heads_kv", 8}, {"head_dim", 64}},
                             {{"tokens", 13}, {"heads_q", 28}, {"heads_kv", 4}, {"head_dim", 128}},
                             {{"tokens", 3}, {"heads_q", 5}, {"heads_kv", 1}, {"head_dim", 256}}},
                            {"neox", "gptj"});
  verify_samples(spec, problems, [](DType) { return testing::rope_bulk_samples(); });
}

TEST_F(OpsGpu, SoftmaxSamplesMatchReference) {
  const auto problems = with_dtypes_and_modes({{{"rows", 1}, {"cols", 32768}},
                                               {{"rows", 7}, {"cols", 4095}},
                                               {{"rows", 33}, {"cols", 1000}},
                                               {{"rows", 3}, {"cols", 262144}},
                                               {{"rows", 64}, {"cols", 37}}},
                                              {"", "causal", "padding"});
  verify_samples(find_spec("softmax", "rowwise"), problems, testing::softmax_samples);
}

// The cluster variant (sm_90): cols * sizeof(T) a multiple of 16; segments that are empty or
// entirely masked (causal rows see a prefix, padding lengths are random), rows of 256K columns,
// clusters of 1 to 8 blocks.
TEST_F(OpsGpu, SoftmaxClusterMatchesReference) {
  const KernelSpec& spec = find_spec("softmax", "cluster");
  if (auto why = spec.arch_rejection(harness::query_device(0).arch())) GTEST_SKIP() << *why;
  const auto problems = with_dtypes_and_modes({{{"rows", 1}, {"cols", 32768}},
                                               {{"rows", 5}, {"cols", 4104}},
                                               {{"rows", 3}, {"cols", 262144}},
                                               {{"rows", 70}, {"cols", 40}}},
                                              {"", "causal", "padding"});
  verify_samples(spec, problems, testing::softmax_cluster_samples);
}

TEST_F(OpsGpu, SoftmaxStagedAndSplitRowsMatchReference) {
  // Staged rows up to the 227 KB of shared memory (f32 32768 columns: 128 KB; bf16 100003: odd,
  // 195 KB; 262144 columns only split), split rows with odd segment ends and empty segments (37
  // columns over up to 64 blocks), every mode.
  const auto problems = with_dtypes_and_modes({{{"rows", 1}, {"cols", 32768}},
                                               {{"rows", 7}, {"cols", 4095}},
                                               {{"rows", 3}, {"cols", 262144}},
                                               {{"rows", 2}, {"cols", 100003}},
                                               {{"rows", 64}, {"cols", 37}}},
                                              {"", "causal", "padding"});
  verify_samples(find_spec("softmax", "rowwise"), problems, testing::softmax_long_samples);
}

TEST_F(OpsGpu, SoftmaxLongRowModesTakeThePerElementPathsWhenMisaligned) {
  const KernelSpec& spec = find_spec("softmax", "rowwise");
  const Problem p{{{"rows", 5}, {"cols", 8192}}, DType::kBF16, "causal"};
  auto f = make_fixture(spec, p, 83, ktune::size_of(p.dtype));
  int accepted = 0;
  for (const Config& c : testing::softmax_long_samples(p.dtype))
    accepted += expect_matches_reference(*f, spec, c);
  EXPECT_EQ(accepted, 8);
}

TEST_F(OpsGpu, SwigluSamplesMatchReference) {
  const auto problems = with_dtypes_and_modes({{{"m", 1}, {"i", 14336}},
                                               {{"m", 7}, {"i", 4095}},
                                               {{"m", 33}, {"i", 1000}},
                                               {{"m", 130}, {"i", 18944}}},
                                              {"fused", "split"});
  verify_samples(find_spec("swiglu", "elementwise"), problems, testing::swiglu_samples);
}

TEST_F(OpsGpu, GpuReferencesMatchCpuFloat64) {
  struct Case {
    const char* kernel;
    Problem problem;
  };
  std::vector<Case> cases;
  for (DType t : testing::ops_dtypes()) {
    for (const char* m : {"", "residual"})
      cases.push_back({"rmsnorm", {{{"rows", 5}, {"hidden", 301}}, t, m}});
    for (const char* m : {"neox", "gptj"}) {
      cases.push_back(
          {"rmsnorm_rope", {{{"tokens", 3}, {"heads_q", 4}, {"heads_kv", 2}, {"head_dim", 64}}, t, m}});
    }
    for (const std::string& m : RopeAppendSpec().layouts()) {
      cases.push_back(
          {"rope_append",
           {{{"tokens", 3}, {"heads_q", 4}, {"heads_kv", 2}, {"head_dim", 64}, {"rot_dim", 32}}, t, m}});
    }
    for (const char* m : {"", "causal", "padding"})
      cases.push_back({"softmax", {{{"rows", 6}, {"cols", 333}}, t, m}});
    for (const char* m : {"fused", "split"}) cases.push_back({"swiglu", {{{"m", 3}, {"i", 257}}, t, m}});
  }
  for (const auto& c : cases) {
    const KernelSpec& spec = *specs_of(c.kernel).front();
    auto f = make_fixture(spec, c.problem, 7);
    const HostTensors cpu = spec.cpu_reference(c.problem, f->host);
    for (const auto& [name, gpu_values] : f->ref) {
      const measure::ErrorMetrics m = measure::compare(gpu_values, cpu.at(name));
      // f32 arithmetic on values of 8 significant bits: the GPU reference is within a few f32
      // roundings of float64; 1e-5 is 10x under the f32 tolerance.
      EXPECT_LT(m.rel_err, 1e-5) << c.kernel << " " << c.problem.layout << " " << name;
      EXPECT_EQ(m.nonfinite_ref + m.nonfinite_out, 0u) << c.kernel << " " << name;
      EXPECT_EQ(m.count, gpu_values.size());
    }
  }
}

TEST_F(OpsGpu, MisalignedPointersTakeThePerElementPaths) {
  // Inputs one element past 16-byte alignment, sizes multiples of every vector width: only the
  // pointer checks send the kernels to their per-element paths (AlignmentRule::required false).
  const std::vector<std::pair<const char*, Problem>> cases = {
      {"rmsnorm", {{{"rows", 9}, {"hidden", 1024}}, DType::kBF16, "residual"}},
      {"rmsnorm_rope",
       {{{"tokens", 3}, {"heads_q", 8}, {"heads_kv", 2}, {"head_dim", 128}}, DType::kF16, "gptj"}},
      {"softmax", {{{"rows", 9}, {"cols", 2048}}, DType::kBF16, ""}},
      {"rope_append",
       {{{"tokens", 3}, {"heads_q", 8}, {"heads_kv", 2}, {"head_dim", 128}, {"rot_dim", 64}},
        DType::kBF16,
        "gptj+norm+paged"}},
      {"swiglu", {{{"m", 9}, {"i", 2048}}, DType::kF32, "split"}},
  };
  for (const auto& [kernel, p] : cases) {
    const KernelSpec& spec = *specs_of(kernel).front();
    auto f = make_fixture(spec, p, 77, ktune::size_of(p.dtype));
    EXPECT_TRUE(expect_matches_reference(*f, spec, spec.default_config(p))) << kernel;
  }
}

TEST_F(OpsGpu, PositionsAsRandomBitPatternsStayInTheTable) {
  // The tuner's harness fills "positions" (declared f32) with random float bits: the kernel must
  // wrap them into the table, as the reference does, and not fault.
  const KernelSpec& spec = find_spec("rmsnorm_rope", "headwise");
  const Problem p{
      {{"tokens", 64}, {"heads_q", 32}, {"heads_kv", 8}, {"head_dim", 128}}, DType::kBF16, "neox"};
  auto f = make_fixture(spec, p, 91);
  std::vector<double> ignored;
  const ReferenceSpec ref = spec.reference(p);
  const auto& pos = ref.plan.tensors[static_cast<std::size_t>(ref.plan.tensor_index("positions"))];
  f->tensors.upload("positions", testing::random_tensor(DType::kF32, pos.elements, 5, ignored));
  testing::run_plan(*gpu().kernels, ref.compile, ref.plan, f->tensors);
  for (const auto& [out, ref_name] : ref.compare) {
    f->ref[out] = testing::download_values(
        f->tensors, ref.plan.tensors[static_cast<std::size_t>(ref.plan.tensor_index(ref_name))]);
  }
  for (const Config& c : testing::rope_samples()) expect_matches_reference(*f, spec, c);
}

}  // namespace
}  // namespace ktune::kernel_templates
