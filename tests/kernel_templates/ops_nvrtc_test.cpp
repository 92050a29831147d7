// Every sampled operator config compiles with NVRTC for sm_90 without spilling its row, and the
// GPU references compile. Toolkit only, no GPU. One NVRTC program per (kernel, dtype, mode) holds
// all its sampled configs as name expressions (three or four programs a kernel, for CI's two
// cores).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "ops_samples.hpp"

namespace ktune::kernel_templates {
namespace {

/// Compiles the accepted (problem, config) pairs (at least `min_accepted`) plus the problem's
/// reference in one program each; checks every name expression is lowered, has registers and
/// does not spill its row.
void compile_all(const KernelSpec& spec, const Problem& problem, const std::vector<Config>& configs,
                 std::size_t min_accepted) {
  const std::string label = std::string(spec.kernel()) + "." + std::string(ktune::to_string(problem.dtype)) +
                            (problem.layout.empty() ? "" : "." + problem.layout) + " @ " +
                            problem.shape_text();
  CompileSpec merged;
  std::size_t accepted = 0;
  for (const Config& c : configs) {
    if (spec.rejection(problem, c)) continue;
    ++accepted;
    const CompileSpec one = spec.compile_spec(problem, c);
    merged.source_name = one.source_name;
    merged.options = one.options;
    for (const auto& e : one.name_expressions) {
      if (std::find(merged.name_expressions.begin(), merged.name_expressions.end(), e) ==
          merged.name_expressions.end()) {
        merged.name_expressions.push_back(e);
      }
    }
  }
  EXPECT_GE(accepted, min_accepted) << label;
  const SourceLibrary lib = SourceLibrary::builtin();
  harness::NvrtcCompiler compiler;
  for (const CompileSpec& cs : {merged, spec.reference(problem).compile}) {
    harness::CompileResult result;
    try {
      result = compiler.compile(make_compile_request(cs, lib, "sm_90"));
    } catch (const Error& e) {
      ADD_FAILURE() << label << ": " << e.what() << "\n" << e.detail();
      continue;
    }
    for (const auto& e : cs.name_expressions) {
      const auto lowered = result.lowered_names.find(e);
      ASSERT_NE(lowered, result.lowered_names.end()) << e;
      const auto res = result.resources.find(lowered->second);
      ASSERT_NE(res, result.resources.end()) << e;
      EXPECT_GT(res->second.registers, 0) << e;
      // ptxas settles a few configs at 32 registers with a 4-20 byte spill (seen: softmax 256x2
      // one-pass, rmsnorm 1024 two-pass residual f16); a row held in registers that spills would
      // spill far more than 32 bytes.
      EXPECT_LE(res->second.spill_store_bytes, 32) << e << " spills";
      std::printf("[sm_90] %-62s regs=%3d spill=%d smem=%d\n", e.c_str(), res->second.registers,
                  res->second.spill_store_bytes, res->second.shared_bytes);
    }
  }
}

TEST(OpsNvrtc, RmsNormSampleCompiles) {
  const KernelSpec& spec = find_spec("rmsnorm", "rowwise");
  compile_all(spec, {{{"rows", 7}, {"hidden", 4096}}, DType::kBF16, ""},
              testing::rmsnorm_samples(DType::kBF16), 6);
  compile_all(spec, {{{"rows", 7}, {"hidden", 4095}}, DType::kF16, "residual"},
              testing::rmsnorm_samples(DType::kF16), 6);
  compile_all(spec, {{{"rows", 7}, {"hidden", 1024}}, DType::kF32, "residual"},
              testing::rmsnorm_samples(DType::kF32), 6);
}

TEST(OpsNvrtc, RmsNormBulkSampleCompiles) {
  const KernelSpec& spec = find_spec("rmsnorm", "bulk");
  compile_all(spec, {{{"rows", 7}, {"hidden", 4096}}, DType::kBF16, ""},
              testing::rmsnorm_bulk_samples(DType::kBF16), 8);
  compile_all(spec, {{{"rows", 7}, {"hidden", 1032}}, DType::kF16, "residual"},
              testing::rmsnorm_bulk_samples(DType::kF16), 8);
  compile_all(spec, {{{"rows", 7}, {"hidden", 1024}}, DType::kF32, "residual"},
              testing::rmsnorm_bulk_samples(DType::kF32), 8);
}

TEST(OpsNvrtc, SoftmaxClusterSampleCompiles) {
  const KernelSpec& spec = find_spec("softmax", "cluster");
  compile_all(spec, {{{"rows", 7}, {"cols", 262144}}, DType::kBF16, ""},
              testing::softmax_cluster_samples(DType::kBF16), 3);
  compile_all(spec, {{{"rows", 7}, {"cols", 4104}}, DType::kF16, "causal"},
              testing::softmax_cluster_samples(DType::kF16), 6);
  compile_all(spec, {{{"rows", 7}, {"cols", 1024}}, DType::kF32, "padding"},
              testing::softmax_cluster_samples(DType::kF32), 6);
}

TEST(OpsNvrtc, RmsNormRopeBulkSampleCompiles) {
  const KernelSpec& spec = find_spec("rmsnorm_rope", "bulk");
  const auto rope = [](int64_t tokens, int64_t hq, int64_t hk, int64_t d, DType t, const char* mode) {
    return Problem{{{"tokens", tokens}, {"heads_q", hq}, {"heads_kv", hk}, {"head_dim", d}}, t, mode};
  };
  compile_all(spec, rope(7, 32, 8, 128, DType::kBF16, "neox"), testing::rope_bulk_samples(), 6);
  compile_all(spec, rope(7, 16, 8, 64, DType::kF16, "gptj"), testing::rope_bulk_samples(), 6);
  compile_all(spec, rope(7, 5, 1, 256, DType::kF32, "gptj"), testing::rope_bulk_samples(), 6);
}

TEST(OpsNvrtc, RmsNormRopeSampleCompiles) {
  const KernelSpec& spec = find_spec("rmsnorm_rope", "headwise");
  const auto problem = [](int64_t d, DType t, const char* mode) {
    return Problem{{{"tokens", 5}, {"heads_q", 32}, {"heads_kv", 8}, {"head_dim", d}}, t, mode};
  };
  compile_all(spec, problem(128, DType::kBF16, "neox"), testing::rope_samples(), 6);
  compile_all(spec, problem(64, DType::kF16, "gptj"), testing::rope_samples(), 4);
  compile_all(spec, problem(256, DType::kF32, "gptj"), testing::rope_samples(), 4);
}

TEST(OpsNvrtc, RopeAppendSampleCompiles) {
  const KernelSpec& spec = find_spec("rope_append", "headwise");
  const auto problem = [](int64_t d, int64_t r, DType t, const char* mode) {
    return Problem{
        {{"tokens", 7}, {"heads_q", 16}, {"heads_kv", 2}, {"head_dim", d}, {"rot_dim", r}}, t, mode};
  };
  compile_all(spec, problem(64, 64, DType::kBF16, "neox"), testing::rope_append_samples(), 5);
  compile_all(spec, problem(128, 64, DType::kF16, "gptj+norm+paged"), testing::rope_append_samples(), 5);
  compile_all(spec, problem(128, 128, DType::kF32, "neox+norm"), testing::rope_append_samples(), 5);
}

TEST(OpsNvrtc, SoftmaxSampleCompiles) {
  const KernelSpec& spec = find_spec("softmax", "rowwise");
  compile_all(spec, {{{"rows", 9}, {"cols", 4096}}, DType::kBF16, ""}, testing::softmax_samples(DType::kBF16),
              6);
  compile_all(spec, {{{"rows", 9}, {"cols", 1000}}, DType::kF16, "causal"},
              testing::softmax_samples(DType::kF16), 6);
  compile_all(spec, {{{"rows", 9}, {"cols", 777}}, DType::kF32, "padding"},
              testing::softmax_samples(DType::kF32), 6);
}

TEST(OpsNvrtc, SoftmaxLongRowModesCompile) {
  const KernelSpec& spec = find_spec("softmax", "rowwise");
  compile_all(spec, {{{"rows", 9}, {"cols", 32768}}, DType::kBF16, ""},
              testing::softmax_long_samples(DType::kBF16), 8);
  compile_all(spec, {{{"rows", 9}, {"cols", 5000}}, DType::kF16, "causal"},
              testing::softmax_long_samples(DType::kF16), 8);
  compile_all(spec, {{{"rows", 9}, {"cols", 777}}, DType::kF32, "padding"},
              testing::softmax_long_samples(DType::kF32), 8);
}

TEST(OpsNvrtc, SwigluSampleCompiles) {
  const KernelSpec& spec = find_spec("swiglu", "elementwise");
  compile_all(spec, {{{"m", 5}, {"i", 14336}}, DType::kBF16, "fused"}, testing::swiglu_samples(DType::kBF16),
              6);
  compile_all(spec, {{{"m", 5}, {"i", 4095}}, DType::kF16, "split"}, testing::swiglu_samples(DType::kF16), 6);
  compile_all(spec, {{{"m", 5}, {"i", 1000}}, DType::kF32, "fused"}, testing::swiglu_samples(DType::kF32), 6);
}

}  // namespace
}  // namespace ktune::kernel_templates
