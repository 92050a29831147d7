// nvrtc: the wgmma template compiles (for sm_90a, whatever target the request names: the spec's
// option comes last) over its sample in both dtypes and layouts and with epilogues; ptxas reports
// each kernel's resources, the main configs do not spill, and ptxas does not serialize the wgmma
// pipeline (its "wgmma.mma_async instructions are serialized" warning). One program per group.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>

#include "gemm_samples.hpp"
#include "gemm_wgmma_samples.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using testing::gemm_problem;

const KernelSpec& wgmma() { return find_spec("gemm", "wgmma"); }

/// Compiles every (problem, config) in one program for `arch`; resources by name expression (empty
/// on a compile error, which fails the test).
std::map<std::string, harness::KernelResources> compile_all(
    const std::vector<std::pair<Problem, Config>>& cases, const std::string& arch, const std::string& label) {
  CompileSpec merged;
  for (const auto& [problem, config] : cases) {
    EXPECT_EQ(wgmma().rejection(problem, config), std::nullopt) << label;
    const CompileSpec one = wgmma().compile_spec(problem, config);
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
  EXPECT_EQ(result.log.find("serialized"), std::string::npos) << label << ":\n" << result.log;
  EXPECT_NE(result.log.find("for 'sm_90a'"), std::string::npos) << label << ": not compiled for sm_90a\n"
                                                                << result.log;
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
    std::printf("[%s] %-72s regs=%3d spill=%d/%d %.0f ms\n", arch.c_str(), e.c_str(), res->second.registers,
                res->second.spill_store_bytes, res->second.spill_load_bytes, result.compile_ms);
  }
  return out;
}

std::string gemm_expression(const Problem& p, const Config& c) {
  return wgmma().compile_spec(p, c).name_expressions.front();
}

TEST(WgmmaNvrtc, SampleCompilesForSm90aBothDtypesAndLayouts) {
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (const char* layout : {"nt", "nn"}) {
      std::vector<std::pair<Problem, Config>> cases;
      for (const Config& c : testing::wgmma_samples())
        cases.emplace_back(gemm_problem(77, 93, 331, dtype, layout), c);
      const auto res = compile_all(cases, "sm_90", std::string(ktune::to_string(dtype)) + "." + layout);
      EXPECT_EQ(res.size(), testing::wgmma_samples().size()) << layout;
      for (const Config& c : testing::wgmma_main_samples()) {
        const auto it = res.find(gemm_expression(cases.front().first, c));
        ASSERT_NE(it, res.end());
        EXPECT_EQ(it->second.spill_store_bytes, 0) << it->first << ": a main config must not spill";
        EXPECT_EQ(it->second.spill_load_bytes, 0) << it->first;
      }
    }
  }
}

TEST(WgmmaNvrtc, EpiloguesCompile) {
  const auto s = testing::wgmma_samples();
  const std::vector<std::pair<Problem, Config>> cases = {
      {gemm_problem(100, 200, 300, DType::kBF16, "nt+bias+silu"), s[0]},
      {gemm_problem(100, 200, 300, DType::kF16, "nn+bias"), s[1]},
      {gemm_problem(100, 200, 300, DType::kBF16, "nt+silu"), s[2]},
  };
  const auto res = compile_all(cases, "sm_90a", "epilogues");
  EXPECT_EQ(res.size(), 3u);
  const auto it = res.find(gemm_expression(cases[0].first, cases[0].second));
  ASSERT_NE(it, res.end());
  EXPECT_EQ(it->second.spill_store_bytes, 0) << it->first;
}

TEST(WgmmaNvrtc, SourceRefusesATargetWithoutWgmma) {
  // Without the spec's sm_90a option the source stops with its own message, not an assembler error.
  CompileSpec cs =
      wgmma().compile_spec(gemm_problem(64, 64, 64, DType::kBF16, "nt"), testing::wgmma_samples()[3]);
  cs.options = {"-std=c++17"};
  harness::NvrtcCompiler compiler;
  try {
    compiler.compile(make_compile_request(cs, SourceLibrary::builtin(), "sm_80"));
    ADD_FAILURE() << "compiled for sm_80";
  } catch (const Error& e) {
    EXPECT_NE((std::string(e.what()) + e.detail()).find("needs sm_90a"), std::string::npos) << e.detail();
  }
}

}  // namespace
}  // namespace ktune::kernel_templates

namespace ktune::kernel_templates {
namespace {

TEST(WgmmaTmaNvrtc, SamplesCompileWithoutSpills) {
  const KernelSpec& tma = find_spec("gemm", "wgmma_tma");
  for (const char* layout : {"nt", "nt+bias+silu"}) {
    for (DType dtype : {DType::kBF16, DType::kF16}) {
      CompileSpec merged;
      for (const auto& [bm, bn, st] :
           {std::array<int64_t, 3>{128, 256, 4}, std::array<int64_t, 3>{128, 128, 6},
            std::array<int64_t, 3>{64, 128, 6}, std::array<int64_t, 3>{64, 64, 3}}) {
        Config c = testing::wgmma_config(bm, bn, st, 8);
        c.variant = "wgmma_tma";
        const Problem p = gemm_problem(200, 300, 520, dtype, layout);
        ASSERT_EQ(tma.rejection(p, c), std::nullopt);
        const CompileSpec one = tma.compile_spec(p, c);
        merged.source_name = one.source_name;
        merged.options = one.options;
        merged.name_expressions.push_back(one.name_expressions.front());
      }
      harness::NvrtcCompiler compiler;
      harness::CompileResult result;
      try {
        result = compiler.compile(make_compile_request(merged, SourceLibrary::builtin(), "sm_90"));
      } catch (const Error& e) {
        FAIL() << e.what() << "\n" << e.detail();
      }
      EXPECT_EQ(result.log.find("serialized"), std::string::npos) << result.log;
      for (const auto& e : merged.name_expressions) {
        const auto& res = result.resources.at(result.lowered_names.at(e));
        EXPECT_EQ(res.spill_store_bytes, 0) << e;
        std::printf("[tma] %-70s regs=%3d\n", e.c_str(), res.registers);
      }
    }
  }
}

}  // namespace
}  // namespace ktune::kernel_templates
