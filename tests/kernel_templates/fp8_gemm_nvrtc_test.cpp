// nvrtc: fp8_gemm compiles for sm_90 (the H200) and sm_89 (Ada, the first fp8 target) over its
// sample in both scale modes, with split-K; ptxas reports each kernel's resources and the main
// configs do not spill; the GPU reference compiles; an sm_80 compile fails with the reason.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "fp8_gemm_samples.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/fp8_gemm/fp8_gemm_spec.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using testing::fp8_problem;

const KernelSpec& fp8() { return find_spec("fp8_gemm", "mma"); }

CompileSpec merge(const std::vector<std::pair<Problem, Config>>& cases) {
  CompileSpec merged;
  for (const auto& [problem, config] : cases) {
    const KernelSpec& spec = find_spec("fp8_gemm", config.variant);
    EXPECT_EQ(spec.rejection(problem, config), std::nullopt);
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
  return merged;
}

/// Compiles every (problem, config) in one program for `arch`; resources by name expression (empty on
/// a compile error, which fails the test).
std::map<std::string, harness::KernelResources> compile_all(
    const std::vector<std::pair<Problem, Config>>& cases, const std::string& arch) {
  const CompileSpec merged = merge(cases);
  harness::NvrtcCompiler compiler;
  harness::CompileResult result;
  try {
    result = compiler.compile(make_compile_request(merged, SourceLibrary::builtin(), arch));
  } catch (const Error& e) {
    ADD_FAILURE() << arch << ": " << e.what() << "\n" << e.detail();
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
    std::printf("[%s] %-62s regs=%3d spill=%d/%d smem=%d %.0f ms\n", arch.c_str(), e.c_str(),
                res->second.registers, res->second.spill_store_bytes, res->second.spill_load_bytes,
                res->second.shared_bytes, result.compile_ms);
  }
  return out;
}

void expect_main_configs_do_not_spill(const std::map<std::string, harness::KernelResources>& res,
                                      const Problem& p) {
  for (const Config& c : testing::fp8_main_samples()) {
    const auto it = res.find(fp8().compile_spec(p, c).name_expressions.front());
    ASSERT_NE(it, res.end());
    EXPECT_EQ(it->second.spill_store_bytes, 0) << it->first << ": a main config must not spill";
    EXPECT_EQ(it->second.spill_load_bytes, 0) << it->first;
  }
}

TEST(Fp8Nvrtc, SampleCompilesForSm90BothModes) {
  for (const char* layout : {"nt", "nt+rowcol"}) {
    std::vector<std::pair<Problem, Config>> cases;
    for (const Config& c : testing::fp8_samples()) cases.emplace_back(fp8_problem(77, 93, 336, layout), c);
    const auto res = compile_all(cases, "sm_90");
    // Eight GEMMs and one finishing pass (shared by the three split-K configs).
    EXPECT_EQ(res.size(), 9u) << layout;
    expect_main_configs_do_not_spill(res, cases.front().first);
  }
}

// The wgmma variant compiles for sm_90a (its options name it) in both modes without spilling.
TEST(Fp8Nvrtc, WgmmaSampleCompilesForSm90a) {
  for (const char* layout : {"nt", "nt+rowcol"}) {
    std::vector<std::pair<Problem, Config>> cases;
    for (const Config& c : testing::fp8_wgmma_samples())
      cases.emplace_back(fp8_problem(77, 93, 336, layout), c);
    const auto res = compile_all(cases, "sm_90");
    EXPECT_EQ(res.size(), testing::fp8_wgmma_samples().size()) << layout;
    for (const auto& [name, r] : res) {
      EXPECT_EQ(r.spill_store_bytes, 0) << name;
      EXPECT_EQ(r.spill_load_bytes, 0) << name;
    }
  }
}

TEST(Fp8Nvrtc, SampleCompilesForSm89) {
  std::vector<std::pair<Problem, Config>> cases;
  for (const Config& c : testing::fp8_samples())
    cases.emplace_back(fp8_problem(4096, 4096, 4096, "nt+rowcol"), c);
  const auto res = compile_all(cases, "sm_89");
  EXPECT_EQ(res.size(), 9u);
  expect_main_configs_do_not_spill(res, cases.front().first);
}

TEST(Fp8Nvrtc, ReferenceCompilesForSm90AndSm80) {
  for (const char* arch : {"sm_90", "sm_80"}) {
    CompileSpec merged;
    for (const char* layout : {"nt", "nt+rowcol"}) {
      const ReferenceSpec r = fp8().reference(fp8_problem(5, 6, 16, layout));
      merged.source_name = r.compile.source_name;
      merged.options = r.compile.options;
      merged.name_expressions.push_back(r.compile.name_expressions.at(0));
    }
    harness::NvrtcCompiler compiler;
    const auto result = compiler.compile(make_compile_request(merged, SourceLibrary::builtin(), arch));
    EXPECT_EQ(result.lowered_names.size(), 2u) << arch;
  }
}

TEST(Fp8Nvrtc, Sm80CompileFailsWithTheReason) {
  const CompileSpec spec = fp8().compile_spec(fp8_problem(64, 64, 64), testing::fp8_main_samples()[2]);
  harness::NvrtcCompiler compiler;
  try {
    compiler.compile(make_compile_request(spec, SourceLibrary::builtin(), "sm_80"));
    ADD_FAILURE() << "an sm_80 compile of fp8_gemm succeeded";
  } catch (const Error& e) {
    const std::string all = std::string(e.what()) + "\n" + e.detail();
    EXPECT_NE(all.find("fp8_gemm needs sm_89 or newer"), std::string::npos) << all;
  }
  EXPECT_TRUE(Fp8GemmSpec::rejection_for_arch("sm_80").has_value());
}

}  // namespace
}  // namespace ktune::kernel_templates
