// decode_attention: every sampled config compiles with NVRTC for sm_80 and sm_90 (mma_cluster: sm_90) at
// each GQA group
// the kernel specialises on (G = 1, 4, 7, 8) and both head_dims, with its combine kernel and the GPU
// reference; prints registers, spills and shared memory (the ptxas figures); asserts no real spill (a few
// bytes at most). Toolkit only, no GPU.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "decode_attention_samples.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

/// Compiles every accepted sample of one template for `problem` (at least `min_accepted`) in one
/// program, and the reference in another, for `arch`.
void compile_template(const Problem& problem, const std::string& arch, const std::string& variant,
                      const std::vector<Config>& samples, std::size_t min_accepted) {
  const KernelSpec& spec = find_spec("decode_attention", variant);
  CompileSpec merged;
  std::size_t accepted = 0;
  for (const Config& c : samples) {
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
  EXPECT_GE(accepted, min_accepted) << problem.shape_text();
  const SourceLibrary lib = SourceLibrary::builtin();
  harness::NvrtcCompiler compiler;
  for (const CompileSpec& cs : {merged, spec.reference(problem).compile}) {
    harness::CompileResult result;
    try {
      result = compiler.compile(make_compile_request(cs, lib, arch));
    } catch (const Error& e) {
      ADD_FAILURE() << problem.shape_text() << " " << arch << ": " << e.what() << "\n" << e.detail();
      continue;
    }
    for (const auto& e : cs.name_expressions) {
      const auto lowered = result.lowered_names.find(e);
      ASSERT_NE(lowered, result.lowered_names.end()) << e;
      const auto res = result.resources.find(lowered->second);
      ASSERT_NE(res, result.resources.end()) << e;
      EXPECT_GT(res->second.registers, 0) << e;
      // ptxas leaves a 4-byte spill in a few G = 1 configs with 8 loads a lane at 56 registers (seen
      // on sm_90); keeping q, the accumulators and the tile's scores would spill hundreds of bytes.
      EXPECT_LE(res->second.spill_store_bytes, 8) << e << " spills (" << arch << ")";
      std::printf("[%s] %-58s regs=%3d spill=%d smem=%d\n", arch.c_str(), e.c_str(), res->second.registers,
                  res->second.spill_store_bytes, res->second.shared_bytes);
    }
  }
}

/// Every template's samples: splitkv's at least `min_accepted` (its rules depend on the group), every
/// mma and (for sm_90) mma_cluster sample (their rules do not).
void compile_all(const Problem& problem, const std::string& arch, std::size_t min_accepted) {
  compile_template(problem, arch, "splitkv", testing::decode_attention_samples(), min_accepted);
  compile_template(problem, arch, "mma", testing::decode_attention_mma_samples(),
                   testing::decode_attention_mma_samples().size());
  if (arch == "sm_90") {
    compile_template(problem, arch, "mma_cluster", testing::decode_attention_mma_cluster_samples(),
                     testing::decode_attention_mma_cluster_samples().size());
  }
}

TEST(AttnNvrtc, Llama3GroupOf4CompilesForSm90AndSm80) {
  compile_all(testing::decode_problem(3, 32, 8, 4097, 128), "sm_90", 6);
  compile_all(testing::decode_problem(3, 32, 8, 4097, 128), "sm_80", 6);
}

TEST(AttnNvrtc, HeadDim64CompilesForSm90AndSm80) {
  compile_all(testing::decode_problem(2, 32, 8, 1000, 64), "sm_90", 6);
  compile_all(testing::decode_problem(2, 32, 8, 1000, 64), "sm_80", 6);
}

TEST(AttnNvrtc, GroupsOf1And7And8CompileForSm90) {
  compile_all(testing::decode_problem(2, 8, 8, 777, 128), "sm_90", 7);
  compile_all(testing::decode_problem(2, 28, 4, 777, 128), "sm_90", 3);
  compile_all(testing::decode_problem(2, 64, 8, 777, 64), "sm_90", 4);
}

}  // namespace
}  // namespace ktune::kernel_templates
