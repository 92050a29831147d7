// Every sampled gemm config compiles with NVRTC for sm_90 (and a smaller sample for sm_80), and
// ptxas reports its resources. Toolkit only, no GPU. One NVRTC program per (template, dtype,
// layout) holds all six sampled configs as name expressions, to stay within CI's two cores.

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "gemm_samples.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using testing::gemm_dtypes;
using testing::gemm_problem;

struct Group {
  std::string label;
  const KernelSpec* spec = nullptr;
  std::vector<std::pair<Problem, Config>> cases;
};

/// Compiles every case of `group` in one program; checks each name expression is lowered and has
/// resources; returns the resources by name expression.
std::map<std::string, harness::KernelResources> compile_group(const Group& group, const std::string& arch) {
  const SourceLibrary lib = SourceLibrary::builtin();
  CompileSpec merged;
  for (const auto& [problem, config] : group.cases) {
    EXPECT_EQ(group.spec->rejection(problem, config), std::nullopt) << group.label;
    const CompileSpec one = group.spec->compile_spec(problem, config);
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
    result = compiler.compile(make_compile_request(merged, lib, arch));
  } catch (const Error& e) {
    ADD_FAILURE() << group.label << " " << arch << ": " << e.what() << "\n" << e.detail();
    return {};
  }
  EXPECT_FALSE(result.cubin.empty());
  std::map<std::string, harness::KernelResources> out;
  for (const auto& e : merged.name_expressions) {
    const auto lowered = result.lowered_names.find(e);
    if (lowered == result.lowered_names.end()) {
      ADD_FAILURE() << "no lowered name for " << e;
      continue;
    }
    const auto res = result.resources.find(lowered->second);
    if (res == result.resources.end()) {
      ADD_FAILURE() << "no resources for " << e << " (" << lowered->second << ")";
      continue;
    }
    EXPECT_GT(res->second.registers, 0) << e;
    out[e] = res->second;
    std::printf("[%s] %-70s regs=%3d spill=%d smem=%d\n", arch.c_str(), e.c_str(), res->second.registers,
                res->second.spill_store_bytes, res->second.shared_bytes);
  }
  return out;
}

TEST(GemmNvrtc, TiledSampleCompilesForSm90BothLayouts) {
  const KernelSpec& spec = find_spec("gemm", "tiled");
  // Shapes only enter through the checks: odd sizes, every config accepted.
  for (DType dtype : gemm_dtypes()) {
    for (const char* layout : {"nt", "nn"}) {
      Group g{std::string("tiled.") + std::string(ktune::to_string(dtype)) + "." + layout, &spec, {}};
      for (const Config& c : testing::tiled_samples())
        g.cases.emplace_back(gemm_problem(77, 93, 331, dtype, layout), c);
      const auto res = compile_group(g, "sm_90");
      // Six configs; split-K ones add the reduction kernel once.
      EXPECT_EQ(res.size(), 7u) << g.label;
    }
  }
}

TEST(GemmNvrtc, GemvSampleCompilesForSm90) {
  const KernelSpec& spec = find_spec("gemm", "gemv");
  const int64_t ms[] = {1, 3, 16, 8, 2, 5};  // MT = 1, 4, 16, 8, 2, 8
  for (DType dtype : gemm_dtypes()) {
    Group g{std::string("gemv.") + std::string(ktune::to_string(dtype)), &spec, {}};
    const auto samples = testing::gemv_samples();
    for (std::size_t i = 0; i < samples.size(); ++i) {
      g.cases.emplace_back(gemm_problem(ms[i], 4096, 4096, dtype, "nt"), samples[i]);
    }
    const auto res = compile_group(g, "sm_90");
    EXPECT_EQ(res.size(), 7u) << g.label;
    for (const auto& [expr, r] : res)
      EXPECT_EQ(r.spill_store_bytes, 0) << expr << ": the GEMV must not spill";
  }
}

TEST(GemmNvrtc, ReferencesCompileForSm90) {
  const KernelSpec& spec = find_spec("gemm", "tiled");
  CompileSpec merged;
  for (DType dtype : gemm_dtypes()) {
    for (const char* layout : {"nt", "nn"}) {
      const ReferenceSpec r = spec.reference(gemm_problem(5, 6, 7, dtype, layout));
      merged.source_name = r.compile.source_name;
      merged.options = r.compile.options;
      merged.name_expressions.push_back(r.compile.name_expressions.at(0));
    }
  }
  harness::NvrtcCompiler compiler;
  const auto result = compiler.compile(make_compile_request(merged, SourceLibrary::builtin(), "sm_90"));
  EXPECT_EQ(result.lowered_names.size(), 6u);
  for (const auto& [expr, lowered] : result.lowered_names) {
    ASSERT_TRUE(result.resources.count(lowered)) << expr;
    EXPECT_EQ(result.resources.at(lowered).spill_store_bytes, 0) << expr;
  }
}

TEST(GemmNvrtc, SampleCompilesForSm80) {
  // sm_80 (A100) is the oldest target the templates support (cp.async); two configs a template.
  for (const char* variant : {"tiled", "gemv"}) {
    const KernelSpec& spec = find_spec("gemm", variant);
    const auto samples = std::string(variant) == "tiled" ? testing::tiled_samples() : testing::gemv_samples();
    Group g{std::string(variant) + ".bf16.sm80", &spec, {}};
    g.cases.emplace_back(gemm_problem(9, 4096, 4096, DType::kBF16, "nt"), samples[0]);
    g.cases.emplace_back(gemm_problem(9, 4096, 4096, DType::kBF16, "nt"), samples[2]);
    EXPECT_GE(compile_group(g, "sm_80").size(), 2u);
  }
}

TEST(GemmNvrtc, UserFolderTemplateIsCompiled) {
  // A user folder's header replaces the built-in one (D1): a broken ktune_device.cuh breaks the build.
  const auto dir =
      std::filesystem::temp_directory_path() / ("ktune_nvrtc_overlay_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "ktune_device.cuh") << "#error user header seen\n";
  const SourceLibrary lib = SourceLibrary::with_folder(dir);
  const KernelSpec& spec = find_spec("gemm", "gemv");
  const Problem p = gemm_problem(1, 64, 256, DType::kF32, "nt");
  harness::NvrtcCompiler compiler;
  try {
    compiler.compile(make_compile_request(spec.compile_spec(p, spec.default_config(p)), lib, "sm_90"));
    ADD_FAILURE() << "compiled despite the user header's #error";
  } catch (const Error& e) {
    EXPECT_NE(e.detail().find("user header seen"), std::string::npos) << e.detail();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ktune::kernel_templates
