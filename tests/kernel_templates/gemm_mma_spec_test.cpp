// unit: the mma template's host side: names, geometry of the launch plans (single, deterministic and
// atomic split-K, epilogues), the layout+epilogue grammar, rejections with their reasons, the
// epilogue CPU reference against hand-worked values.

#include <gtest/gtest.h>

#include <cmath>

#include "gemm_mma_samples.hpp"
#include "gemm_samples.hpp"
#include "kernel_templates/gemm/gemm_mma_spec.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using testing::gemm_problem;
using testing::mma_config;

const KernelSpec& mma() { return find_spec("gemm", "mma"); }

TEST(MmaSpec, IsRegisteredInTheGemmFamily) {
  EXPECT_EQ(mma().kernel(), "gemm");
  EXPECT_EQ(mma().source_name(), "gemm_mma.cu");
  const auto files = kernel_source_files("gemm");
  EXPECT_NE(std::find(files.begin(), files.end(), "gemm_mma.cu"), files.end());
  EXPECT_NE(std::find(files.begin(), files.end(), "gemm_epilogue_reference.cu"), files.end());
}

TEST(MmaSpec, CanonicalNames) {
  const Problem p = gemm_problem(4096, 4096, 4096, DType::kBF16, "nt");
  EXPECT_EQ(mma().canonical_name(p, mma_config(128, 256, 32, 2, 4, 3, 1, 0, 8)),
            "gemm.bf16.nt.mma.128x256x32.w2x4.s3.sk1.a0.g8");
  const Problem q = gemm_problem(16, 4096, 4096, DType::kF16, "nn+bias+silu");
  EXPECT_EQ(mma().canonical_name(q, mma_config(16, 64, 128, 1, 4, 4, 8, 1, 1)),
            "gemm.f16.nn+bias+silu.mma.16x64x128.w1x4.s4.sk8.a1.g1");
}

TEST(MmaSpec, ParsesLayoutAndEpilogue) {
  const auto f = parse_gemm_form("nn+bias+silu");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->layout, GemmLayout::kNN);
  EXPECT_TRUE(f->bias);
  EXPECT_TRUE(f->silu);
  EXPECT_EQ(f->text(), "nn+bias+silu");
  EXPECT_EQ(parse_gemm_form("")->text(), "nt");
  EXPECT_EQ(parse_gemm_form("nt+silu")->text(), "nt+silu");
  EXPECT_FALSE(parse_gemm_form("nt+silu+bias"));  // one canonical order: names stay unique
  EXPECT_FALSE(parse_gemm_form("tn"));
  EXPECT_FALSE(parse_gemm_form("nt+relu"));
  // Every gemm template takes the epilogue forms of the layouts it serves: gemv "nt" forms only.
  const Problem p = gemm_problem(16, 64, 64, DType::kBF16, "nt+bias");
  EXPECT_FALSE(find_spec("gemm", "tiled").rejection(p, testing::tiled_samples()[0]));
  EXPECT_FALSE(find_spec("gemm", "gemv").rejection(p, find_spec("gemm", "gemv").default_config(p)));
  EXPECT_FALSE(mma().rejection(p, mma().default_config(p)));
  const Problem nn = gemm_problem(16, 64, 64, DType::kBF16, "nn+bias");
  const auto why = find_spec("gemm", "gemv").rejection(nn, find_spec("gemm", "gemv").default_config(nn));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("nn+bias"), std::string::npos) << *why;
}

TEST(MmaSpec, SingleLaunchGeometry) {
  const Problem p = gemm_problem(1000, 3000, 512, DType::kBF16, "nt");
  const Config c = mma_config(128, 256, 32, 2, 4, 3, 1, 0, 8);
  const LaunchPlan plan = mma().launch_plan(p, c);
  ASSERT_EQ(plan.launches.size(), 1u);
  const auto& l = plan.launches[0];
  EXPECT_EQ(l.dims.grid, (Dim3{8 * 12, 1, 1}));  // ceil(1000/128) * ceil(3000/256)
  EXPECT_EQ(l.dims.block, (Dim3{256, 1, 1}));
  EXPECT_EQ(l.dims.dynamic_smem_bytes, 3u * (128 + 256) * 32 * 2);
  EXPECT_EQ(l.name_expression, "ktune_gemm_mma<128,256,32,2,4,3,1,false,8,__nv_bfloat16,true,false,false>");
  ASSERT_EQ(l.args.size(), 11u);
  EXPECT_EQ(l.args[3].kind, ArgSpec::Kind::kNullPointer);  // no workspace
  EXPECT_EQ(l.args[4].kind, ArgSpec::Kind::kNullPointer);  // no bias
  EXPECT_EQ(l.args[8].kind, ArgSpec::Kind::kRowStride);
  EXPECT_EQ(l.args[10].tensor, "c");
  EXPECT_EQ(plan.tensors.size(), 3u);
}

TEST(MmaSpec, DeterministicSplitKPlan) {
  const Problem p = gemm_problem(7, 4096, 4096, DType::kF16, "nn");
  const LaunchPlan plan = mma().launch_plan(p, mma_config(16, 64, 128, 1, 4, 4, 4, 0, 1));
  ASSERT_EQ(plan.launches.size(), 2u);
  EXPECT_EQ(plan.launches[0].dims.grid, (Dim3{64, 1, 4}));
  EXPECT_EQ(plan.launches[1].name_expression, "ktune_gemm_splitk_reduce<__half>");
  EXPECT_EQ(plan.launches[1].args.back().integer, 4);
  const auto& ws = plan.tensors[static_cast<std::size_t>(plan.tensor_index("workspace"))];
  EXPECT_EQ(ws.elements, 4 * 7 * 4096);
  EXPECT_EQ(ws.dtype, DType::kF32);
}

TEST(MmaSpec, AtomicSplitKPlanZeroesAndConverts) {
  const Problem p = gemm_problem(5, 300, 1000, DType::kBF16, "nt+bias+silu");
  const LaunchPlan plan = mma().launch_plan(p, mma_config(32, 128, 64, 1, 4, 3, 8, 1, 1));
  ASSERT_EQ(plan.launches.size(), 3u);
  EXPECT_EQ(plan.launches[0].name_expression, "ktune_gemm_zero<float>");
  EXPECT_EQ(plan.launches[0].args[1].integer, 5 * 300);
  EXPECT_EQ(plan.launches[1].name_expression,
            "ktune_gemm_mma<32,128,64,1,4,3,8,true,1,__nv_bfloat16,true,true,true>");
  EXPECT_EQ(plan.launches[2].name_expression, "ktune_gemm_finish<__nv_bfloat16,true,true>");
  EXPECT_EQ(plan.launches[2].args.back().integer, 1);  // one f32 sum to convert
  EXPECT_EQ(plan.tensors[static_cast<std::size_t>(plan.tensor_index("workspace"))].elements, 5 * 300);
  EXPECT_EQ(plan.tensors[static_cast<std::size_t>(plan.tensor_index("bias"))].elements, 300);
  // Every name expression the launches use is compiled.
  const CompileSpec cs = mma().compile_spec(p, mma_config(32, 128, 64, 1, 4, 3, 8, 1, 1));
  for (const auto& l : plan.launches) {
    EXPECT_NE(std::find(cs.name_expressions.begin(), cs.name_expressions.end(), l.name_expression),
              cs.name_expressions.end())
        << l.name_expression;
  }
}

TEST(MmaSpec, Rejections) {
  const Problem p = gemm_problem(128, 128, 128, DType::kBF16, "nt");
  const auto why = [&](const Config& c) { return mma().rejection(p, c).value_or(""); };
  EXPECT_NE(why(mma_config(64, 128, 32, 8, 1, 3, 1, 0, 1)).find("BLOCK_M"), std::string::npos);  // 64 % 128
  EXPECT_NE(why(mma_config(64, 96, 32, 2, 2, 3, 1, 0, 1)).find("BLOCK_N"), std::string::npos);   // not pow2
  EXPECT_NE(why(mma_config(64, 64, 24, 2, 2, 3, 1, 0, 1)).find("BLOCK_K"), std::string::npos);
  EXPECT_NE(why(mma_config(64, 64, 256, 2, 2, 3, 1, 0, 1)).find("BLOCK_K"), std::string::npos);
  EXPECT_NE(why(mma_config(64, 64, 32, 2, 2, 1, 1, 0, 1)).find("STAGES"), std::string::npos);
  EXPECT_NE(why(mma_config(64, 64, 32, 2, 2, 3, 1, 1, 1)).find("atomic"), std::string::npos);
  EXPECT_NE(why(mma_config(64, 64, 32, 2, 2, 3, 2, 2, 1)).find("SPLIT_K_MODE"), std::string::npos);
  EXPECT_NE(why(mma_config(256, 256, 128, 4, 4, 3, 1, 0, 1)).find("shared memory"), std::string::npos);
  EXPECT_NE(why(mma_config(256, 256, 32, 8, 4, 3, 1, 0, 1)).find("warps"), std::string::npos);
  EXPECT_NE(why(mma_config(64, 64, 32, 2, 2, 3, 1, 0, 0)).find("SWIZZLE"), std::string::npos);
  Config missing = mma_config(64, 64, 32, 2, 2, 3, 1, 0, 1);
  missing.erase("SWIZZLE");
  EXPECT_NE(why(missing).find("SWIZZLE"), std::string::npos);
  // f32 problems belong to the tiled template.
  const Problem f32 = gemm_problem(128, 128, 128, DType::kF32, "nt");
  EXPECT_NE(mma().rejection(f32, mma().default_config(f32)).value_or("").find("f32"), std::string::npos);
  EXPECT_THROW(mma().launch_plan(f32, mma().default_config(f32)), Error);
  // Every sample is accepted at an odd shape, both layouts.
  for (const Config& c : testing::mma_samples()) {
    for (const char* layout : {"nt", "nn+bias"}) {
      EXPECT_EQ(mma().rejection(gemm_problem(77, 93, 331, DType::kF16, layout), c), std::nullopt);
    }
  }
}

TEST(MmaSpec, EpilogueCpuReferenceByHand) {
  // A = [[1, 2]], B (nt) = [[3, 4], [-5, 1]]: C = [11, -3]; + bias [1, 2] = [12, -1];
  // silu: 12 / (1 + e^-12), -1 / (1 + e).
  const Problem p = gemm_problem(1, 2, 2, DType::kBF16, "nt+bias+silu");
  const HostTensors in = {{"a", {1, 2}}, {"b", {3, 4, -5, 1}}, {"bias", {1, 2}}};
  const auto out = mma().cpu_reference(p, in).at("c");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NEAR(out[0], 12.0 / (1.0 + std::exp(-12.0)), 1e-12);
  EXPECT_NEAR(out[1], -1.0 / (1.0 + std::exp(1.0)), 1e-12);
  EXPECT_THROW(mma().cpu_reference(p, {{"a", {1, 2}}, {"b", {3, 4, -5, 1}}}), Error);  // no bias
}

TEST(MmaSpec, ReferencePlanBindsBias) {
  const ReferenceSpec r = mma().reference(gemm_problem(9, 10, 11, DType::kBF16, "nn+bias"));
  EXPECT_EQ(r.compile.name_expressions.at(0),
            "ktune_gemm_reference_epilogue<__nv_bfloat16,false,true,false>");
  EXPECT_GE(r.plan.tensor_index("bias"), 0);
  EXPECT_EQ(r.compare.at(0), (std::pair<std::string, std::string>{"c", "c_ref"}));
  // Without an epilogue, the family's reference.
  EXPECT_EQ(mma().reference(gemm_problem(9, 10, 11, DType::kBF16, "nn")).compile.source_name,
            "gemm_reference.cu");
}

TEST(MmaSpec, WorkCountsIncludeBias) {
  const auto plain = mma().work(gemm_problem(2, 3, 4, DType::kBF16, "nt"));
  const auto bias = mma().work(gemm_problem(2, 3, 4, DType::kBF16, "nt+bias"));
  EXPECT_DOUBLE_EQ(plain.flops, 2.0 * 2 * 3 * 4);
  EXPECT_DOUBLE_EQ(bias.min_bytes - plain.min_bytes, 3 * 2);
}

}  // namespace
}  // namespace ktune::kernel_templates
