// unit: fp8_gemm's host side without CUDA: e4m3 decoding of known bit patterns, the CPU float64
// reference on hand-worked cases (per-tensor and row/column scales, saturation), the spec's rules,
// names, plans and references and the catalog entry.

#include <gtest/gtest.h>

#include <toml++/toml.h>

#include <cmath>
#include <limits>

#include "core/dtype.hpp"
#include "fp8_gemm_samples.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "kernel_templates/fp8_gemm/fp8_gemm_spec.hpp"
#include "kernel_templates/fp8_gemm/fp8_gemm_wgmma_spec.hpp"
#include "kernel_templates/fp8_gemm/reference_fp8_gemm.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using testing::fp8_config;
using testing::fp8_problem;

const KernelSpec& fp8() { return find_spec("fp8_gemm", "mma"); }

TEST(Fp8Decode, KnownE4m3BitPatterns) {
  // S.EEEE.MMM, bias 7: 0.0111.000 = 2^0; 0.1111.110 = 2^8 * 1.75 = 448 (the max); 0.0000.001 =
  // 2^-6 * 1/8 = 2^-9 (smallest subnormal); 1.0110.100 = -(2^-1 * 1.5).
  EXPECT_EQ(ktune::decode_fp8e4m3(0x38), 1.0);
  EXPECT_EQ(ktune::decode_fp8e4m3(0x40), 2.0);
  EXPECT_EQ(ktune::decode_fp8e4m3(0x3C), 1.5);
  EXPECT_EQ(ktune::decode_fp8e4m3(0x7E), 448.0);
  EXPECT_EQ(ktune::decode_fp8e4m3(0xFE), -448.0);
  EXPECT_EQ(ktune::decode_fp8e4m3(0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(ktune::decode_fp8e4m3(0x08), std::ldexp(1.0, -6));  // smallest normal
  EXPECT_EQ(ktune::decode_fp8e4m3(0xB4), -0.75);
  EXPECT_EQ(ktune::decode_fp8e4m3(0x80), 0.0);
  EXPECT_TRUE(std::signbit(ktune::decode_fp8e4m3(0x80)));
  EXPECT_TRUE(std::isnan(ktune::decode_fp8e4m3(0x7F)));
  EXPECT_TRUE(std::isnan(ktune::decode_fp8e4m3(0xFF)));
  EXPECT_EQ(ktune::decode_fp8e4m3(0x78), 256.0);  // 0.1111.000: E=15 is finite in E4M3FN
}

// A [2,3] = [[1, 2, -0.5], [0.25, 448, 1]], B [2,3] = [[1, 1, 2], [-2, 0.5, 4]] (rows are n):
// A B^T = [[1 + 2 - 1, -2 + 1 - 2], [0.25 + 448 + 2, -0.5 + 224 + 4]] = [[2, -3], [450.25, 227.5]].
const std::vector<double> kA = {1, 2, -0.5, 0.25, 448, 1};
const std::vector<double> kB = {1, 1, 2, -2, 0.5, 4};

TEST(Fp8Reference, PerTensorScalesHandWorked) {
  const std::vector<double> sa = {0.5};
  const std::vector<double> sb = {3};
  const auto c = fp8_gemm_reference_f64(kA, kB, sa, sb, 2, 2, 3, false);
  EXPECT_EQ(c, (std::vector<double>{3, -4.5, 675.375, 341.25}));  // x 1.5
}

TEST(Fp8Reference, RowColumnScalesHandWorked) {
  const std::vector<double> sa = {2, -1};   // per row of A
  const std::vector<double> sb = {0.5, 4};  // per column of C
  const auto c = fp8_gemm_reference_f64(kA, kB, sa, sb, 2, 2, 3, true);
  // [[2*2*0.5, -3*2*4], [450.25*-1*0.5, 227.5*-1*4]]
  EXPECT_EQ(c, (std::vector<double>{2, -24, -225.125, -910}));
}

TEST(Fp8Reference, SaturatesToTheLargestFiniteBf16) {
  EXPECT_EQ(kBf16MaxFinite, std::ldexp(255.0, 120));  // 0x7F7F: 1.1111111b * 2^127
  // 16 products of 448 * 448 = 3211264; x 1e30 x 1e3 = 3.2e39, past bf16 (and f32) range.
  const std::vector<double> a(16, 448.0);
  std::vector<double> b(32, 448.0);
  for (int i = 16; i < 32; ++i) b[static_cast<std::size_t>(i)] = -448.0;
  const auto c =
      fp8_gemm_reference_f64(a, b, std::vector<double>{1e30}, std::vector<double>{1e3}, 1, 2, 16, false);
  EXPECT_EQ(c[0], kBf16MaxFinite);
  EXPECT_EQ(c[1], -kBf16MaxFinite);
  // Under the limit nothing changes: 3211264 * 1e30 * 1e-3.
  const auto d =
      fp8_gemm_reference_f64(a, b, std::vector<double>{1e30}, std::vector<double>{1e-3}, 1, 2, 16, false);
  EXPECT_DOUBLE_EQ(d[0], 3211264.0 * 1e27);
  // NaN stays NaN (e4m3 0x7F in an input).
  std::vector<double> an = a;
  an[3] = std::numeric_limits<double>::quiet_NaN();
  const auto n =
      fp8_gemm_reference_f64(an, b, std::vector<double>{1}, std::vector<double>{1}, 1, 2, 16, false);
  EXPECT_TRUE(std::isnan(n[0]));
}

TEST(Fp8Reference, RejectsMismatchedSizes) {
  EXPECT_THROW(
      fp8_gemm_reference_f64(kA, kB, std::vector<double>{1, 2}, std::vector<double>{1}, 2, 2, 3, false),
      Error);
  EXPECT_THROW(fp8_gemm_reference_f64(kA, kB, std::vector<double>{1}, std::vector<double>{1}, 2, 2, 4, false),
               Error);
  EXPECT_THROW(fp8_gemm_reference_f64(kA, kB, std::vector<double>{1}, std::vector<double>{1}, 0, 2, 3, false),
               Error);
}

TEST(Fp8Spec, SpecCpuReferenceIsTheFunction) {
  const Problem p = fp8_problem(2, 2, 3, "nt+rowcol");
  const HostTensors in = {{"a", kA}, {"b", kB}, {"a_scale", {2, -1}}, {"b_scale", {0.5, 4}}};
  EXPECT_EQ(fp8().cpu_reference(p, in).at("c"), (std::vector<double>{2, -24, -225.125, -910}));
  EXPECT_THROW(fp8().cpu_reference(p, {{"a", kA}, {"b", kB}}), Error);
}

TEST(Fp8Spec, SamplesAndDefaultAreAccepted) {
  for (const char* layout : {"nt", "nt+rowcol", ""}) {
    const Problem p = fp8_problem(77, 93, 336, layout);
    for (const Config& c : testing::fp8_samples()) {
      EXPECT_EQ(fp8().rejection(p, c), std::nullopt) << fp8().canonical_name(p, c);
    }
    EXPECT_EQ(fp8().rejection(p, fp8().default_config(p)), std::nullopt);
    EXPECT_LE(Fp8GemmSpec::shared_bytes(fp8().default_config(p)), 48 * 1024);  // no opt-in
  }
}

TEST(Fp8Spec, RejectsWithReasons) {
  const Config ok = testing::fp8_main_samples()[0];
  const auto why = [&](const Problem& p, const Config& c) {
    return fp8().rejection(p, c).value_or("accepted");
  };
  EXPECT_NE(why(fp8_problem(16, 4096, 4100), ok).find("multiple of 16"), std::string::npos);
  EXPECT_NE(why(fp8_problem(16, 4096, 4104), ok).find("K=4104"), std::string::npos);
  EXPECT_NE(why(fp8_problem(16, 64, 64, "nn"), ok).find("ldmatrix"), std::string::npos);
  EXPECT_NE(why(fp8_problem(16, 64, 64, "nt+bias"), ok).find("nt+rowcol"), std::string::npos);
  Problem bf16 = fp8_problem(16, 64, 64);
  bf16.dtype = DType::kBF16;
  EXPECT_NE(why(bf16, ok).find("fp8e4m3"), std::string::npos);
  EXPECT_NE(why(fp8_problem(0, 64, 64), ok).find("outside"), std::string::npos);
  const Problem p = fp8_problem(128, 128, 256);
  EXPECT_NE(why(p, fp8_config(128, 128, 16, 2, 2, 3, 1, 8)).find("BLOCK_K=16"), std::string::npos);
  EXPECT_NE(why(p, fp8_config(128, 128, 512, 2, 2, 3, 1, 8)).find("BLOCK_K=512"), std::string::npos);
  EXPECT_NE(why(p, fp8_config(128, 128, 96, 2, 2, 3, 1, 8)).find("power of two"), std::string::npos);
  EXPECT_NE(why(p, fp8_config(48, 128, 64, 2, 2, 3, 1, 8)).find("16*WARPS_M"), std::string::npos);
  EXPECT_NE(why(p, fp8_config(128, 96, 64, 2, 4, 3, 1, 8)).find("16*WARPS_N"), std::string::npos);
  EXPECT_NE(why(p, fp8_config(256, 256, 64, 4, 8, 3, 1, 8)).find("warps"), std::string::npos);
  EXPECT_NE(why(p, fp8_config(128, 128, 64, 2, 2, 7, 1, 8)).find("STAGES=7"), std::string::npos);
  EXPECT_NE(why(p, fp8_config(256, 256, 256, 4, 4, 3, 1, 8)).find("shared memory"), std::string::npos);
  EXPECT_NE(why(p, fp8_config(128, 128, 64, 2, 2, 3, 0, 8)).find("SPLIT_K must be positive"),
            std::string::npos);
  Config extra = ok;
  extra.set("SPLIT_K_MODE", 0);
  EXPECT_NE(why(p, extra).find("SPLIT_K_MODE"), std::string::npos);
  Config missing = ok;
  missing.erase("SWIZZLE");
  EXPECT_NE(why(p, missing).find("SWIZZLE"), std::string::npos);
  EXPECT_THROW(fp8().compile_spec(fp8_problem(16, 64, 24), ok), Error);
  EXPECT_THROW(fp8().launch_plan(fp8_problem(16, 64, 24), ok), Error);
  EXPECT_THROW(fp8().reference(fp8_problem(16, 64, 24)), Error);
}

TEST(Fp8Spec, ArchRejection) {
  for (const char* arch : {"sm_80", "sm_86", "sm_75", "compute_80"}) {
    const auto why = Fp8GemmSpec::rejection_for_arch(arch);
    ASSERT_TRUE(why.has_value()) << arch;
    EXPECT_NE(why->find("sm_89"), std::string::npos) << *why;
  }
  for (const char* arch : {"sm_89", "sm_90", "sm_90a", "sm_100", "sm_120"}) {
    EXPECT_EQ(Fp8GemmSpec::rejection_for_arch(arch), std::nullopt) << arch;
  }
  EXPECT_TRUE(Fp8GemmSpec::rejection_for_arch("hopper").has_value());
}

TEST(Fp8Spec, NamesAndCompileSpec) {
  const Config c = fp8_config(128, 128, 64, 2, 2, 4, 1, 8);
  EXPECT_EQ(fp8().canonical_name(fp8_problem(1, 2, 16), c), "fp8_gemm.fp8e4m3.nt.128x128x64.w2x2.s4.sk1.g8");
  EXPECT_EQ(fp8().canonical_name(fp8_problem(1, 2, 16, ""), c),
            "fp8_gemm.fp8e4m3.nt.128x128x64.w2x2.s4.sk1.g8");
  EXPECT_EQ(fp8().canonical_name(fp8_problem(1, 2, 16, "nt+rowcol"), c),
            "fp8_gemm.fp8e4m3.nt+rowcol.128x128x64.w2x2.s4.sk1.g8");
  const CompileSpec cs = fp8().compile_spec(fp8_problem(100, 200, 320, "nt+rowcol"), c);
  EXPECT_EQ(cs.source_name, "fp8_gemm.cu");
  EXPECT_EQ(cs.name_expressions, (std::vector<std::string>{"ktune_fp8_gemm<128,128,64,2,2,4,1,8,true>"}));
  // The cubin depends on the config and the mode, not on the shape.
  EXPECT_EQ(fp8().compile_spec(fp8_problem(4096, 4096, 4096, "nt+rowcol"), c).name_expressions,
            cs.name_expressions);
  const CompileSpec split =
      fp8().compile_spec(fp8_problem(100, 200, 320), fp8_config(32, 128, 64, 1, 4, 4, 8, 1));
  EXPECT_EQ(split.name_expressions, (std::vector<std::string>{"ktune_fp8_gemm<32,128,64,1,4,4,8,1,false>",
                                                              "ktune_fp8_gemm_finish<false>"}));
}

TEST(Fp8Spec, LaunchPlanTensorsAndLaunches) {
  const Config c = fp8_config(128, 256, 64, 2, 4, 3, 1, 8);
  const LaunchPlan p = fp8().launch_plan(fp8_problem(100, 300, 4096), c);
  ASSERT_EQ(p.tensors.size(), 5u);
  const auto t = [&](const char* name) {
    return p.tensors.at(static_cast<std::size_t>(p.tensor_index(name)));
  };
  EXPECT_EQ(t("a").dtype, DType::kFP8E4M3);
  EXPECT_EQ(t("a").elements, 100 * 4096);
  EXPECT_EQ(t("b").elements, 300 * 4096);
  EXPECT_EQ(t("b").bytes(), 300 * 4096);
  EXPECT_EQ(t("a_scale").elements, 1);
  EXPECT_EQ(t("b_scale").dtype, DType::kF32);
  EXPECT_EQ(t("c").dtype, DType::kBF16);
  EXPECT_EQ(t("c").role, TensorRole::kOutput);
  ASSERT_EQ(p.launches.size(), 1u);
  const KernelLaunch& l = p.launches[0];
  EXPECT_EQ(l.dims.grid, (Dim3{1 * 2, 1, 1}));  // ceil(100/128) * ceil(300/256)
  EXPECT_EQ(l.dims.block, (Dim3{256, 1, 1}));
  EXPECT_EQ(l.dims.dynamic_smem_bytes, 3u * (128 + 256) * 64);
  ASSERT_EQ(l.args.size(), 9u);
  EXPECT_EQ(l.args[4].tensor, "c");
  EXPECT_EQ(l.args[5].kind, ArgSpec::Kind::kNullPointer);
  EXPECT_EQ(l.args[8].integer, 4096);

  const LaunchPlan rc =
      fp8().launch_plan(fp8_problem(100, 300, 4096, "nt+rowcol"), fp8_config(16, 64, 256, 1, 4, 3, 4, 1));
  EXPECT_EQ(rc.tensors.at(static_cast<std::size_t>(rc.tensor_index("a_scale"))).elements, 100);
  EXPECT_EQ(rc.tensors.at(static_cast<std::size_t>(rc.tensor_index("b_scale"))).elements, 300);
  EXPECT_EQ(rc.tensors.at(static_cast<std::size_t>(rc.tensor_index("workspace"))).elements, 4 * 100 * 300);
  ASSERT_EQ(rc.launches.size(), 2u);
  EXPECT_EQ(rc.launches[0].dims.grid.z, 4u);
  EXPECT_EQ(rc.launches[1].name_expression, "ktune_fp8_gemm_finish<true>");
  EXPECT_EQ(rc.launches[1].args[4].integer, 100 * 300);
  EXPECT_EQ(rc.launches[1].args[6].integer, 4);
}

TEST(Fp8Spec, ReferenceWorkAndAlignment) {
  const Problem p = fp8_problem(33, 70, 48, "nt+rowcol");
  const ReferenceSpec r = fp8().reference(p);
  EXPECT_EQ(r.compile.source_name, "fp8_gemm_reference.cu");
  EXPECT_EQ(r.compile.name_expressions, (std::vector<std::string>{"ktune_fp8_gemm_reference<true>"}));
  EXPECT_EQ(r.compare, (std::vector<std::pair<std::string, std::string>>{{"c", "c_ref"}}));
  EXPECT_EQ(r.plan.launches.at(0).dims.grid, (Dim3{5, 3, 1}));
  const LaunchPlan plan = fp8().launch_plan(p, fp8().default_config(p));
  for (const char* name : {"a", "b", "a_scale", "b_scale"}) {
    const auto& ref_t = r.plan.tensors.at(static_cast<std::size_t>(r.plan.tensor_index(name)));
    const auto& t = plan.tensors.at(static_cast<std::size_t>(plan.tensor_index(name)));
    EXPECT_EQ(ref_t.elements, t.elements) << name;
    EXPECT_EQ(ref_t.dtype, t.dtype) << name;
  }
  const WorkCounts w = fp8().work(fp8_problem(16, 4096, 4096));
  EXPECT_EQ(w.flops, 2.0 * 16 * 4096 * 4096);
  EXPECT_EQ(w.min_bytes, 16.0 * 4096 + 4096.0 * 4096 + 8 + 2.0 * 16 * 4096);
  const auto rules = fp8().alignment(p, fp8().default_config(p));
  ASSERT_GE(rules.size(), 2u);
  EXPECT_EQ(rules[0].tensor, "a");
  EXPECT_TRUE(rules[0].required);
  EXPECT_EQ(rules[0].bytes, 16);
}

TEST(Fp8Registry, CatalogAndHash) {
  const KernelDescriptor* k = find_kernel("fp8_gemm");
  EXPECT_EQ(k->dtypes, (std::vector<DType>{DType::kFP8E4M3}));
  EXPECT_EQ(k->layouts, (std::vector<std::string>{"nt", "nt+rowcol"}));
  EXPECT_EQ(k->default_layout, "nt");
  EXPECT_EQ(specs_of("fp8_gemm").size(), 2u);
  EXPECT_EQ(kernel_source_files("fp8_gemm"),
            (std::vector<std::string>{"fp8_gemm.cu", "fp8_gemm_reference.cu", "fp8_gemm_wgmma.cu"}));
  EXPECT_EQ(template_source_hash("fp8_gemm").size(), 16u);
  EXPECT_EQ(current_template_hashes().count("fp8_gemm"), 1u);
}

Config wgmma_cfg(int64_t bm, int64_t bn, int64_t stages, int64_t swizzle = 8) {
  return {"wgmma_tma",
          {{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", 128}, {"STAGES", stages}, {"SWIZZLE", swizzle}}};
}

TEST(Fp8Wgmma, NamesRulesPlanAndSharedParts) {
  const Fp8GemmWgmmaSpec s;
  const Problem p{{{"m", 1000}, {"n", 4096}, {"k", 4112}}, DType::kFP8E4M3, "nt+rowcol"};
  EXPECT_EQ(s.canonical_name(p, wgmma_cfg(128, 256, 4)),
            "fp8_gemm.fp8e4m3.nt+rowcol.wgmma_tma.128x256x128.s4.g8");
  EXPECT_EQ(s.compile_spec(p, wgmma_cfg(64, 128, 6, 1)).name_expressions,
            (std::vector<std::string>{"ktune_fp8_gemm_wgmma<64,128,6,1,true>"}));
  EXPECT_EQ(s.compile_spec(p, wgmma_cfg(64, 128, 6, 1)).options.back(), "--gpu-architecture=sm_90a");
  EXPECT_EQ(s.rejection(p, wgmma_cfg(128, 256, 4)), std::nullopt);
  EXPECT_NE(s.rejection(p, wgmma_cfg(256, 128, 4)), std::nullopt);  // BLOCK_M 64 or 128
  EXPECT_NE(s.rejection(p, wgmma_cfg(128, 96, 4)), std::nullopt);   // the wgmma N
  EXPECT_NE(s.rejection(p, wgmma_cfg(128, 256, 1)), std::nullopt);  // one stage
  EXPECT_NE(s.rejection(p, wgmma_cfg(128, 256, 6)), std::nullopt);  // 6 * 384 * 128 > 227 KiB
  Config bk64 = wgmma_cfg(128, 256, 4);
  bk64.set("BLOCK_K", 64);
  EXPECT_NE(s.rejection(p, bk64), std::nullopt);
  EXPECT_NE(
      s.rejection(Problem{{{"m", 64}, {"n", 64}, {"k", 100}}, DType::kFP8E4M3, "nt"}, wgmma_cfg(64, 64, 3)),
      std::nullopt);  // K % 16
  EXPECT_NE(s.rejection(Problem{p.dims, DType::kBF16, "nt"}, wgmma_cfg(64, 64, 3)), std::nullopt);
  EXPECT_EQ(s.arch_rejection("sm_90a"), std::nullopt);
  EXPECT_NE(s.arch_rejection("sm_89"), std::nullopt);
  EXPECT_NE(s.arch_rejection("sm_100"), std::nullopt);

  const LaunchPlan plan = s.launch_plan(p, wgmma_cfg(128, 256, 4));
  ASSERT_EQ(plan.launches.size(), 1u);
  const KernelLaunch& l = plan.launches[0];
  EXPECT_EQ(l.dims.grid, (Dim3{8 * 16, 1, 1}));  // ceil(1000 / 128) x 4096 / 256
  EXPECT_EQ(l.dims.block, (Dim3{384, 1, 1}));
  EXPECT_EQ(l.dims.dynamic_smem_bytes, 4u * 384u * 128u + 1024u + 64u);
  ASSERT_EQ(l.args.size(), 8u);
  EXPECT_EQ(l.args[0].kind, ArgSpec::Kind::kTensorMap);
  EXPECT_EQ(l.args[0].map, (std::array<int64_t, 4>{1000, 4112, 128, 128}));
  EXPECT_EQ(l.args[1].map, (std::array<int64_t, 4>{4096, 4112, 256, 128}));
  EXPECT_EQ(l.args[2].tensor, "a_scale");
  // The mma variant's tensors (without a workspace), work and reference.
  const LaunchPlan mma = fp8().launch_plan(p, fp8().default_config(p));
  ASSERT_EQ(plan.tensors.size(), mma.tensors.size());
  for (std::size_t i = 0; i < plan.tensors.size(); ++i) {
    EXPECT_EQ(plan.tensors[i].name, mma.tensors[i].name);
    EXPECT_EQ(plan.tensors[i].elements, mma.tensors[i].elements);
  }
  EXPECT_DOUBLE_EQ(s.work(p).min_bytes, fp8().work(p).min_bytes);
  EXPECT_EQ(s.reference(p).compile.name_expressions, fp8().reference(p).compile.name_expressions);
  EXPECT_TRUE(s.alignment(p, wgmma_cfg(128, 256, 4)).at(0).required);
  EXPECT_EQ(s.rejection(p, s.default_config(p)), std::nullopt);
}

}  // namespace
}  // namespace ktune::kernel_templates
