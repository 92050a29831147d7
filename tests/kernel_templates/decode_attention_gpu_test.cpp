// gpu: decode_attention. The GPU reference against the CPU float64 reference on small shapes (D4);
// every sampled config against the GPU reference at odd sizes (context not a multiple of BLOCK_N
// nor of SPLIT_K * BLOCK_N, seq 1, batch 3, groups of 1, 4, 7, 8 and 16, head_dim 64 and 128, a 32K
// context), with a cache larger than the context and with per-sequence lengths (0, 1, clamped), and
// over a paged cache (shuffled blocks, an id out of range).
// Skips with the reason when there is no GPU.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>

#include "decode_attention_samples.hpp"
#include "gpu_plan_runner.hpp"
#include "harness/context.hpp"
#include "harness/device_info.hpp"
#include "kernel_templates/decode_attention/decode_attention_spec.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "measure/tolerance.hpp"
#include "measure/verification.hpp"
#include "ops_gpu_support.hpp"

namespace ktune::kernel_templates {
namespace {

using testing::decode_problem;
using testing::DeviceTensors;
using testing::KernelCache;

testing::GpuSession& gpu() { return testing::gpu_session(); }

class AttnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu().context) GTEST_SKIP() << gpu().skip_reason;
    gpu().context->make_current();
  }
};

/// The splitkv template's spec: the reference, tensors and calls every template shares.
const DecodeAttentionSpec& spec() {
  static const DecodeAttentionSpec kSpec;
  return kSpec;
}

/// The spec of `config`'s template.
const DecodeAttentionSpec& spec(const Config& config) {
  return dynamic_cast<const DecodeAttentionSpec&>(find_spec("decode_attention", config.variant));
}

/// One problem and call: random inputs on the device and the host, and the GPU reference output.
struct Fixture {
  Problem problem;
  DecodeAttentionCall call;
  DeviceTensors tensors;
  HostTensors host;
  std::vector<double> ref;
};

std::unique_ptr<Fixture> make_fixture(const Problem& p, const DecodeAttentionCall& call,
                                      const std::vector<int32_t>& lens, uint64_t seed) {
  auto f = std::make_unique<Fixture>();
  f->problem = p;
  f->call = call;
  const ReferenceSpec ref = spec().reference(p, call);
  std::mt19937_64 rng(seed);
  for (const TensorSpec& t : ref.plan.tensors) {
    f->tensors.ensure(t);
    if (t.role != TensorRole::kInput) {
      f->tensors.poison(t.name);
    } else if (t.name == "block_table") {
      // The blocks shuffled (every sequence's blocks its own), the first id out of range (read as
      // block 0 by the kernels and the references).
      const DecodeAttentionCall g = DecodeAttentionSpec::paged_geometry(p, call);
      std::vector<int32_t> ids(static_cast<std::size_t>(g.num_blocks));
      for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
      std::shuffle(ids.begin(), ids.end(), rng);
      ids.resize(static_cast<std::size_t>(t.elements));
      ids[0] = static_cast<int32_t>(g.num_blocks + 3);
      std::vector<uint8_t> bytes(ids.size() * 4);
      std::memcpy(bytes.data(), ids.data(), bytes.size());
      f->tensors.upload(t.name, bytes);
      f->host[t.name].assign(ids.begin(), ids.end());
    } else if (t.name == "context_lens") {
      std::vector<uint8_t> bytes(lens.size() * 4);
      std::memcpy(bytes.data(), lens.data(), bytes.size());
      f->tensors.upload(t.name, bytes);
      f->host[t.name].assign(lens.begin(), lens.end());
    } else {
      f->tensors.upload(t.name, testing::random_tensor(t.dtype, t.elements, rng(), f->host[t.name]));
    }
  }
  testing::run_plan(*gpu().kernels, ref.compile, ref.plan, f->tensors);
  f->ref = testing::download_values(
      f->tensors, ref.plan.tensors[static_cast<std::size_t>(ref.plan.tensor_index("o_ref"))]);
  return f;
}

/// Runs `config` on the fixture's inputs with a poisoned output; false when the config is rejected.
bool expect_matches_reference(Fixture& f, const Config& config) {
  if (spec(config).rejection(f.problem, config)) return false;
  const std::string label = spec(config).canonical_name(f.problem, config) + " @ " + f.problem.shape_text() +
                            " seq_max=" + std::to_string(f.call.seq_max) +
                            (f.call.context_lens ? " lens" : "");
  try {
    const CompileSpec compile = spec(config).compile_spec(f.problem, config);
    const LaunchPlan plan = spec(config).launch_plan(f.problem, config, f.call);
    for (const auto& t : plan.tensors) {
      f.tensors.ensure(t);
      if (t.role != TensorRole::kInput) f.tensors.poison(t.name);
    }
    testing::run_plan(*gpu().kernels, compile, plan, f.tensors);
    const auto got =
        testing::download_values(f.tensors, plan.tensors[static_cast<std::size_t>(plan.tensor_index("o"))]);
    const measure::Verdict v =
        measure::judge(measure::compare(got, f.ref), measure::tolerance_for(DType::kBF16));
    EXPECT_TRUE(v.ok) << label << ": " << v.reason;
  } catch (const Error& e) {
    ADD_FAILURE() << label << ": " << e.what() << "\n" << e.detail();
  }
  return true;
}

struct Case {
  Problem problem;
  DecodeAttentionCall call;
  std::vector<int32_t> lens;
};

void verify_samples(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    for (const Config& s : testing::decode_attention_all_samples()) {
      if (!spec(s).rejection(c.problem, s)) gpu().kernels->prefetch(spec(s).compile_spec(c.problem, s));
    }
    gpu().kernels->prefetch(spec().reference(c.problem, c.call).compile);
  }
  uint64_t seed = 300;
  for (const Case& c : cases) {
    auto f = make_fixture(c.problem, c.call, c.lens, seed++);
    int accepted = 0;
    for (const Config& s : testing::decode_attention_all_samples())
      accepted += expect_matches_reference(*f, s) ? 1 : 0;
    const bool paged = DecodeAttentionSpec::paged(c.problem);  // the tensor-core templates only
    EXPECT_GE(accepted,
              static_cast<int>(testing::decode_attention_tensor_core_samples().size()) + (paged ? 0 : 1))
        << c.problem.shape_text() << ": every mma and mma_cluster sample and some splitkv ones";
    for (const DecodeAttentionSpec* s :
         {&spec(), &spec(Config{"mma", {}}), &spec(Config{"mma_cluster", {}})}) {
      if (paged && s == &spec()) continue;
      EXPECT_TRUE(expect_matches_reference(*f, s->default_config(c.problem))) << c.problem.shape_text();
    }
  }
}

Problem paged(Problem p) {
  p.layout = "paged";
  return p;
}

TEST_F(AttnGpu, GpuReferenceMatchesCpuFloat64) {
  const std::vector<Case> cases = {
      {decode_problem(3, 8, 2, 100, 64), {}, {}},
      {decode_problem(3, 8, 2, 100, 128), {120, true, 0.0f}, {0, 1, 200}},
      {decode_problem(2, 7, 7, 1, 128), {}, {}},
      {decode_problem(1, 16, 2, 513, 64), {600, false, 0.3f}, {}},
      {paged(decode_problem(3, 8, 2, 100, 128)), {}, {}},
      {paged(decode_problem(2, 16, 2, 300, 64)), {0, true, 0.0f, 32, 12, 30}, {300, 77}},
  };
  for (const Case& c : cases) {
    auto f = make_fixture(c.problem, c.call, c.lens, 7);
    const HostTensors cpu = spec().cpu_reference(c.problem, f->host, c.call);
    const measure::ErrorMetrics m = measure::compare(f->ref, cpu.at("o"));
    // f32 arithmetic on values of 8 significant bits over at most ~600 keys: within a few 1e-7 of
    // float64; 1e-5 is 10x under the f32 tolerance.
    EXPECT_LT(m.rel_err, 1e-5) << c.problem.shape_text();
    EXPECT_LT(m.max_abs_err, 1e-5) << c.problem.shape_text();
    EXPECT_EQ(m.nonfinite_ref + m.nonfinite_out, 0u) << c.problem.shape_text();
    EXPECT_EQ(m.count, f->ref.size());
  }
}

TEST_F(AttnGpu, SamplesMatchReferenceAtOddSizes) {
  verify_samples({
      {decode_problem(3, 32, 8, 1000, 128), {}, {}},   // Llama-3-8B heads, G 4
      {decode_problem(3, 32, 8, 4097, 64), {}, {}},    // D 64, one key past 4K
      {decode_problem(1, 8, 8, 1, 64), {}, {}},        // G 1, seq 1: every split but one empty
      {decode_problem(3, 64, 8, 777, 128), {}, {}},    // G 8
      {decode_problem(2, 28, 4, 333, 128), {}, {}},    // G 7 (Qwen2.5-7B)
      {decode_problem(2, 16, 1, 95, 64), {}, {}},      // group 16: two blocks of 8 heads
      {decode_problem(1, 32, 8, 32773, 128), {}, {}},  // 32K + 5
  });
}

TEST_F(AttnGpu, SamplesMatchReferenceWithCacheStrideAndLengths) {
  verify_samples({
      {decode_problem(3, 32, 8, 1000, 128), {1024, false, 0.0f}, {}},
      {decode_problem(5, 32, 8, 700, 64), {800, true, 0.0f}, {0, 1, 699, 5000, 333}},
      {decode_problem(4, 8, 2, 129, 128), {129, true, 0.2f}, {129, -7, 64, 2}},
  });
}

// The paged cache: blocks of 16 (the tuned geometry), 32 and 64 keys, a table with spare columns
// and spare blocks, contexts that end inside a block, per-sequence lengths; every tensor-core sample.
TEST_F(AttnGpu, PagedSamplesMatchReference) {
  verify_samples({
      {paged(decode_problem(3, 32, 8, 1000, 128)), {}, {}},
      {paged(decode_problem(3, 32, 8, 1000, 128)), {0, false, 0.0f, 64, 20, 70}, {}},
      {paged(decode_problem(5, 32, 8, 700, 64)), {0, true, 0.0f, 32, 25, 130}, {0, 1, 699, 5000, 333}},
      {paged(decode_problem(1, 14, 2, 4097, 64)), {0, false, 0.0f, 16, 260, 300}, {}},
  });
}

}  // namespace
}  // namespace ktune::kernel_templates
