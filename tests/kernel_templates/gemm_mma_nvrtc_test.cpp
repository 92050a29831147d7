// nvrtc: the mma template compiles for sm_90 (the H200) over its sample in both dtypes, layouts and
// with epilogues, and for sm_80 (the oldest target: cp.async, ldmatrix, mma.sync m16n8k16); ptxas
// reports each kernel's resources and the main configs do not spill. The cluster split-K template
// (mma_cluster) compiles for sm_90 without spills. One NVRTC program per group keeps CI at 13
// compiles.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "gemm_mma_samples.hpp"
#include "gemm_samples.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using testing::gemm_problem;

/// Compiles every (problem, config) in one program for `arch`; returns resources by name expression
/// (empty on a compile error, which fails the test).
std::map<std::string, harness::KernelResources> compile_all(
    const std::vector<std::pair<Problem, Config>>& cases, const std::string& arch, const std::string& label,
    const std::string& variant = "mma") {
  const KernelSpec& spec = find_spec("gemm", variant);
  CompileSpec merged;
  for (const auto& [problem, config] : cases) {
    EXPECT_EQ(spec.rejection(problem, config), std::nullopt) << label;
    const CompileSpec one = spec.compile_spec(problem, config);
    merged.source_name = one.source_name;
    merged.options = one.options;
    for (const auto& e : one.name_expressions) {
      if (std::find(merged.name_expressions.begin(), merged.name_expressions.end(), e) ==
          merged.name_expressions.end()) {
        merged.name_expressions.push_back(e);
      }
    }
  }
  harness::NvrtcCompiler compiler;
  harness::CompileResult result;
  try {
    result = compiler.compile(make_compile_request(merged, SourceLibrary::builtin(), arch));
  } catch (const Error& e) {
    ADD_FAILURE() << label << " " << arch << ": " << e.what() << "\n" << e.detail();
    return {};
  }
  std::map<std::string, harness::KernelResources> out;
  for (const auto& e : merged.name_expressions) {
    const auto lowered = result.lowered_names.find(e);
    if (lowered == result.lowered_names.end()) {
      ADD_FAILURE() << "no lowered name for " << e;
      continue;
    }
    const auto res = result.resources.find(lowered->second);
    if (res == result.resources.end()) {
      ADD_FAILURE() << "no resources for " << e;
      continue;
    }
    EXPECT_GT(res->second.registers, 0) << e;
    out[e] = res->second;
    std::printf("[%s] %-90s regs=%3d spill=%d smem=%d %.0f ms\n", arch.c_str(), e.c_str(),
                res->second.registers, res->second.spill_store_bytes, res->second.shared_bytes,
                result.compile_ms);
  }
  return out;
}

/// The name expression of the GEMM kernel itself (the first) of (problem, config).
std::string gemm_expression(const Problem& p, const Config& c) {
  return find_spec("gemm", "mma").compile_spec(p, c).name_expressions.front();
}

TEST(MmaNvrtc, SampleCompilesForSm90BothDtypesAndLayouts) {
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (const char* layout : {"nt", "nn"}) {
      std::vector<std::pair<Problem, Config>> cases;
      for (const Config& c : testing::mma_samples())
        cases.emplace_back(gemm_problem(77, 93, 331, dtype, layout), c);
      const auto res = compile_all(cases, "sm_90", std::string(ktune::to_string(dtype)) + "." + layout);
      // Seven GEMMs, the ordered reduction, the atomic variant's zeroing and conversion (one reduction).
      EXPECT_EQ(res.size(), 9u) << layout;
      for (const Config& c : testing::mma_main_samples()) {
        const auto it = res.find(gemm_expression(cases.front().first, c));
        ASSERT_NE(it, res.end());
        EXPECT_EQ(it->second.spill_store_bytes, 0) << it->first << ": a main config must not spill";
        EXPECT_EQ(it->second.spill_load_bytes, 0) << it->first;
      }
    }
  }
}

TEST(MmaNvrtc, EpiloguesCompileForSm90) {
  const auto samples = testing::mma_samples();
  std::vector<std::pair<Problem, Config>> cases = {
      {gemm_problem(100, 200, 300, DType::kBF16, "nt+bias+silu"), samples[0]},
      {gemm_problem(100, 200, 300, DType::kBF16, "nn+bias"), samples[3]},
      {gemm_problem(100, 200, 300, DType::kBF16, "nt+silu"), samples[4]},
  };
  const auto res = compile_all(cases, "sm_90", "epilogues");
  // Three GEMMs, two finishing passes, one zeroing.
  EXPECT_EQ(res.size(), 6u);
}

TEST(MmaNvrtc, EpilogueReferenceCompilesForSm90) {
  const KernelSpec& spec = find_spec("gemm", "mma");
  CompileSpec merged;
  for (const char* layout : {"nt+bias+silu", "nn+bias", "nt+silu"}) {
    const ReferenceSpec r = spec.reference(gemm_problem(5, 6, 7, DType::kF16, layout));
    EXPECT_EQ(r.compile.source_name, "gemm_epilogue_reference.cu");
    merged.source_name = r.compile.source_name;
    merged.options = r.compile.options;
    merged.name_expressions.push_back(r.compile.name_expressions.at(0));
  }
  harness::NvrtcCompiler compiler;
  const auto result = compiler.compile(make_compile_request(merged, SourceLibrary::builtin(), "sm_90"));
  EXPECT_EQ(result.lowered_names.size(), 3u);
}

TEST(MmaNvrtc, ClusterSampleCompilesForSm90WithoutSpills) {
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (const char* layout : {"nt", "nn+bias+silu"}) {
      std::vector<std::pair<Problem, Config>> cases;
      for (const Config& c : testing::mma_cluster_samples())
        cases.emplace_back(gemm_problem(77, 93, 331, dtype, layout), c);
      const auto res = compile_all(
          cases, "sm_90", std::string("cluster.") + ktune::to_string(dtype) + "." + layout, "mma_cluster");
      EXPECT_EQ(res.size(), testing::mma_cluster_samples().size()) << layout;  // one kernel a config
      for (const auto& [expr, r] : res) {
        EXPECT_EQ(r.spill_store_bytes, 0) << expr;
        EXPECT_EQ(r.spill_load_bytes, 0) << expr;
      }
    }
  }
}

TEST(MmaNvrtc, MainConfigsCompileForSm80) {
  for (const char* layout : {"nt", "nn"}) {
    std::vector<std::pair<Problem, Config>> cases;
    for (const Config& c : testing::mma_main_samples())
      cases.emplace_back(gemm_problem(4096, 4096, 4096, DType::kBF16, layout), c);
    EXPECT_EQ(compile_all(cases, "sm_80", std::string("sm80.") + layout).size(), 3u);
  }
}

}  // namespace
}  // namespace ktune::kernel_templates
