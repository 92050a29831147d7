// Geometry, arguments, tensors, names and work of the gemm specs for sample shapes, worked by hand.
#include "kernel_templates/gemm/gemm_spec.hpp"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

#include "kernel_templates/embedded_sources.hpp"
#include "kernel_templates/gemm/gemv_spec.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

Problem gemm_problem(int64_t m, int64_t n, int64_t k, DType dtype, std::string layout = "nt") {
  return {{{"m", m}, {"n", n}, {"k", k}}, dtype, std::move(layout)};
}

Config tiled(int64_t bm, int64_t bn, int64_t bk, int64_t wm, int64_t wn, int64_t stages, int64_t split_k) {
  return {"tiled",
          {{"BLOCK_M", bm},
           {"BLOCK_N", bn},
           {"BLOCK_K", bk},
           {"WARPS_M", wm},
           {"WARPS_N", wn},
           {"STAGES", stages},
           {"SPLIT_K", split_k}}};
}

Config gemv(int64_t bk, int64_t split_k, int64_t warps, int64_t rows) {
  return {"gemv", {{"BLOCK_K", bk}, {"SPLIT_K", split_k}, {"WARPS", warps}, {"ROWS_PER_BLOCK", rows}}};
}

TEST(TiledGemmSpec, CanonicalNames) {
  const TiledGemmSpec spec;
  EXPECT_EQ(spec.canonical_name(gemm_problem(1, 1, 1, DType::kBF16), tiled(128, 128, 32, 2, 2, 3, 1)),
            "gemm.bf16.nt.128x128x32.w2x2.s3.sk1");
  EXPECT_EQ(spec.canonical_name(gemm_problem(1, 1, 1, DType::kF32, "nn"), tiled(64, 32, 16, 4, 1, 2, 8)),
            "gemm.f32.nn.64x32x16.w4x1.s2.sk8");
}

TEST(TiledGemmSpec, SplitKPlan) {
  // m=100, n=70, k=50, bf16, nt; 64x32x32 tile, 2x2 warps, 3 stages, split 4.
  const TiledGemmSpec spec;
  const Problem p = gemm_problem(100, 70, 50, DType::kBF16);
  const Config c = tiled(64, 32, 32, 2, 2, 3, 4);
  ASSERT_EQ(spec.rejection(p, c), std::nullopt);

  const CompileSpec cs = spec.compile_spec(p, c);
  EXPECT_EQ(cs.source_name, "gemm_tiled.cu");
  EXPECT_EQ(cs.name_expressions,
            (std::vector<std::string>{"ktune_gemm_tiled<64,32,32,2,2,3,4,__nv_bfloat16,true,false,false>",
                                      "ktune_gemm_splitk_reduce<__nv_bfloat16>"}));

  const LaunchPlan plan = spec.launch_plan(p, c);
  ASSERT_EQ(plan.tensors.size(), 4u);
  EXPECT_EQ(plan.tensors[0].name, "a");
  EXPECT_EQ(plan.tensors[0].elements, 100 * 50);
  EXPECT_EQ(plan.tensors[1].elements, 50 * 70);
  EXPECT_EQ(plan.tensors[2].role, TensorRole::kOutput);
  EXPECT_EQ(plan.tensors[2].bytes(), 100 * 70 * 2);
  EXPECT_EQ(plan.tensors[3].name, "workspace");
  EXPECT_EQ(plan.tensors[3].dtype, DType::kF32);
  EXPECT_EQ(plan.tensors[3].elements, 4 * 100 * 70);

  ASSERT_EQ(plan.launches.size(), 2u);
  const KernelLaunch& main = plan.launches[0];
  EXPECT_EQ(main.dims.grid, (Dim3{3, 2, 4}));  // ceil(70/32), ceil(100/64), split
  EXPECT_EQ(main.dims.block, (Dim3{128, 1, 1}));
  // 3 stages * (A 64 x (32+8) + B 32 x (32+8)) bf16 elements * 2 bytes.
  EXPECT_EQ(main.dims.dynamic_smem_bytes, 3u * (64 * 40 + 32 * 40) * 2);
  ASSERT_EQ(main.args.size(), 11u);
  EXPECT_EQ(main.args[3].tensor, "workspace");
  EXPECT_EQ(main.args[4].kind, ArgSpec::Kind::kNullPointer);  // no bias
  EXPECT_EQ(main.args[7].integer, 50);
  // The row strides, written contiguous ("nt": B's rows are K long).
  for (std::size_t i = 8; i < 11; ++i) EXPECT_EQ(main.args[i].kind, ArgSpec::Kind::kRowStride) << i;
  EXPECT_EQ(main.args[8].tensor, "a");
  EXPECT_EQ(main.args[8].integer, 50);
  EXPECT_EQ(main.args[9].tensor, "b");
  EXPECT_EQ(main.args[9].integer, 50);
  EXPECT_EQ(main.args[10].tensor, "c");
  EXPECT_EQ(main.args[10].integer, 70);

  const KernelLaunch& reduce = plan.launches[1];
  EXPECT_EQ(reduce.name_expression, "ktune_gemm_splitk_reduce<__nv_bfloat16>");
  EXPECT_EQ(reduce.dims.grid, (Dim3{28, 1, 1}));  // ceil(7000 / 256)
  ASSERT_EQ(reduce.args.size(), 6u);              // workspace, c, M, N, ldc, splits
  EXPECT_EQ(reduce.args[2].integer, 100);
  EXPECT_EQ(reduce.args[3].integer, 70);
  EXPECT_EQ(reduce.args[4].kind, ArgSpec::Kind::kRowStride);
  EXPECT_EQ(reduce.args[4].tensor, "c");
  EXPECT_EQ(reduce.args[4].integer, 70);
  EXPECT_EQ(reduce.args[5].integer, 4);
}

TEST(TiledGemmSpec, NoSplitHasNoWorkspaceAndNnSharedMemory) {
  const TiledGemmSpec spec;
  const Problem p = gemm_problem(33, 65, 17, DType::kF32, "nn");
  const Config c = tiled(32, 64, 16, 2, 2, 2, 1);
  const LaunchPlan plan = spec.launch_plan(p, c);
  EXPECT_EQ(plan.tensors.size(), 3u);
  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_EQ(plan.launches[0].name_expression, "ktune_gemm_tiled<32,64,16,2,2,2,1,float,false,false,false>");
  EXPECT_EQ(plan.launches[0].args[3].kind, ArgSpec::Kind::kNullPointer);
  EXPECT_EQ(plan.launches[0].dims.grid, (Dim3{2, 2, 1}));
  // nn: B tile is BK x (BN + 4): 2 * (32*(16+4) + 16*(64+4)) * 4 bytes.
  EXPECT_EQ(plan.launches[0].dims.dynamic_smem_bytes, 2u * (32 * 20 + 16 * 68) * 4);
}

TEST(TiledGemmSpec, EpilogueFormsBindTheBiasAndFinishSplitsThroughTheEpilogue) {
  const TiledGemmSpec spec;
  const Problem p = gemm_problem(10, 70, 50, DType::kF32, "nn+bias+silu");
  const Config c = tiled(32, 32, 16, 1, 1, 2, 4);
  ASSERT_EQ(spec.rejection(p, c), std::nullopt);
  EXPECT_EQ(spec.canonical_name(p, c), "gemm.f32.nn+bias+silu.32x32x16.w1x1.s2.sk4");
  const CompileSpec cs = spec.compile_spec(p, c);
  EXPECT_EQ(cs.name_expressions,
            (std::vector<std::string>{"ktune_gemm_tiled<32,32,16,1,1,2,4,float,false,true,true>",
                                      "ktune_gemm_finish<float,true,true>"}));
  const LaunchPlan plan = spec.launch_plan(p, c);
  EXPECT_EQ(plan.tensors[static_cast<std::size_t>(plan.tensor_index("bias"))].elements, 70);
  EXPECT_EQ(plan.launches[0].args[4].tensor, "bias");
  ASSERT_EQ(plan.launches.size(), 2u);
  const KernelLaunch& finish = plan.launches[1];
  EXPECT_EQ(finish.name_expression, "ktune_gemm_finish<float,true,true>");
  ASSERT_EQ(finish.args.size(), 7u);  // workspace, c, bias, M, N, ldc, splits
  EXPECT_EQ(finish.args[2].tensor, "bias");
  EXPECT_EQ(finish.args[6].integer, 4);
  // The work counts the bias read; the reference is the epilogue reference with the bias bound.
  EXPECT_DOUBLE_EQ(spec.work(p).min_bytes, (10.0 * 50 + 50 * 70 + 10 * 70 + 70) * 4);
  const ReferenceSpec ref = spec.reference(p);
  EXPECT_EQ(ref.compile.source_name, "gemm_epilogue_reference.cu");
  EXPECT_EQ(ref.plan.launches.at(0).args.at(2).tensor, "bias");
  // SiLU alone has no bias tensor.
  const LaunchPlan silu = spec.launch_plan(gemm_problem(10, 70, 50, DType::kBF16, "nt+silu"), c);
  for (const TensorSpec& t : silu.tensors) EXPECT_NE(t.name, "bias");
  EXPECT_EQ(silu.launches[0].args[4].kind, ArgSpec::Kind::kNullPointer);
}

TEST(GemvSpec, EpilogueFormsOfNtOnly) {
  const GemvSpec spec;
  const Config c = gemv(256, 1, 4, 2);
  const Problem p = gemm_problem(1, 1152, 896, DType::kBF16, "nt+bias");
  ASSERT_EQ(spec.rejection(p, c), std::nullopt);
  EXPECT_EQ(spec.canonical_name(p, c), "gemm.bf16.nt+bias.gemv.k256.sk1.w4.r2");
  EXPECT_EQ(spec.compile_spec(p, c).name_expressions,
            (std::vector<std::string>{"ktune_gemv<256,1,4,2,1,__nv_bfloat16,true,false>"}));
  const LaunchPlan plan = spec.launch_plan(p, c);
  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_EQ(plan.launches[0].args[4].tensor, "bias");
  for (const char* layout : {"nn", "nn+bias", "nn+silu"}) {
    EXPECT_NE(spec.rejection(gemm_problem(1, 64, 512, DType::kBF16, layout), c), std::nullopt) << layout;
  }
}

TEST(TiledGemmSpec, Rejections) {
  const TiledGemmSpec spec;
  const Problem p = gemm_problem(64, 64, 64, DType::kF16);
  EXPECT_NE(spec.rejection(p, tiled(36, 64, 32, 2, 2, 2, 1)), std::nullopt);    // 36 % 8
  EXPECT_NE(spec.rejection(p, tiled(64, 36, 32, 2, 1, 2, 1)), std::nullopt);    // 36 % (8 * 1)
  EXPECT_NE(spec.rejection(p, tiled(64, 64, 4, 2, 2, 2, 1)), std::nullopt);     // 4 f16 < 16 bytes
  EXPECT_NE(spec.rejection(p, tiled(64, 64, 32, 2, 2, 1, 1)), std::nullopt);    // one stage
  EXPECT_NE(spec.rejection(p, tiled(256, 256, 32, 8, 8, 2, 1)), std::nullopt);  // 64 warps
  Config missing = tiled(64, 64, 32, 2, 2, 2, 1);
  missing.erase("STAGES");
  EXPECT_NE(spec.rejection(p, missing), std::nullopt);
  Config extra = tiled(64, 64, 32, 2, 2, 2, 1);
  extra.set("SWIZZLE", 1);
  EXPECT_NE(spec.rejection(p, extra), std::nullopt);
  EXPECT_NE(spec.rejection(gemm_problem(64, 64, 64, DType::kF16, "tn"), tiled(64, 64, 32, 2, 2, 2, 1)),
            std::nullopt);
  EXPECT_NE(spec.rejection(p, gemv(256, 1, 4, 2)), std::nullopt);  // wrong variant
  EXPECT_EQ(spec.rejection(p, spec.default_config(p)), std::nullopt);
  try {
    spec.launch_plan(p, tiled(36, 64, 32, 2, 2, 2, 1));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find("BLOCK_M=36"), std::string::npos) << e.what();
  }
}

TEST(GemmSpecBase, WorkAndReference) {
  const TiledGemmSpec spec;
  const Problem p = gemm_problem(100, 70, 50, DType::kBF16);
  const WorkCounts w = spec.work(p);
  EXPECT_EQ(w.flops, 2.0 * 100 * 70 * 50);
  EXPECT_EQ(w.min_bytes, (100.0 * 50 + 50 * 70 + 100 * 70) * 2);
  EXPECT_EQ(spec.work(gemm_problem(1, 4096, 4096, DType::kF32)).min_bytes, (4096.0 + 4096 * 4096 + 4096) * 4);

  const ReferenceSpec r = spec.reference(gemm_problem(100, 70, 50, DType::kF16, "nn"));
  EXPECT_EQ(r.compile.source_name, "gemm_reference.cu");
  EXPECT_EQ(r.compile.name_expressions, (std::vector<std::string>{"ktune_gemm_reference<__half,false>"}));
  ASSERT_EQ(r.plan.launches.size(), 1u);
  EXPECT_EQ(r.plan.launches[0].dims.grid, (Dim3{5, 7, 1}));  // ceil(70/16), ceil(100/16)
  EXPECT_EQ(r.plan.launches[0].dims.block, (Dim3{16, 16, 1}));
  EXPECT_EQ(r.plan.tensors[2].name, "c_ref");
  EXPECT_EQ(r.plan.tensors[2].dtype, DType::kF32);
  EXPECT_EQ(r.plan.tensors[0].name, "a");
  ASSERT_EQ(r.compare.size(), 1u);
  EXPECT_EQ(r.compare[0], (std::pair<std::string, std::string>{"c", "c_ref"}));
}

TEST(GemmSpecBase, CpuReferenceByName) {
  const GemvSpec spec;
  // A [1,2] = [[3, -2]], B nt [N=2, K=2] = [[1, 4], [-5, 0.5]]: C = [3 - 8, -15 - 1] = [-5, -16].
  const HostTensors out =
      spec.cpu_reference(gemm_problem(1, 2, 2, DType::kF32), {{"a", {3, -2}}, {"b", {1, 4, -5, 0.5}}});
  ASSERT_EQ(out.count("c"), 1u);
  EXPECT_EQ(out.at("c"), (std::vector<double>{-5, -16}));
  EXPECT_THROW(spec.cpu_reference(gemm_problem(1, 2, 2, DType::kF32), {{"a", {3, -2}}}), Error);
}

TEST(GemvSpec, CanonicalNameAndPlan) {
  const GemvSpec spec;
  const Problem p = gemm_problem(3, 1001, 4096, DType::kBF16);
  const Config c = gemv(256, 4, 4, 2);
  EXPECT_EQ(spec.canonical_name(p, c), "gemm.bf16.nt.gemv.k256.sk4.w4.r2");
  ASSERT_EQ(spec.rejection(p, c), std::nullopt);
  const CompileSpec cs = spec.compile_spec(p, c);
  EXPECT_EQ(cs.name_expressions.front(), "ktune_gemv<256,4,4,2,4,__nv_bfloat16,false,false>");  // MT 4: m 3
  const LaunchPlan plan = spec.launch_plan(p, c);
  ASSERT_EQ(plan.launches.size(), 2u);
  EXPECT_EQ(plan.launches[0].dims.grid, (Dim3{501, 4, 1}));  // ceil(1001 / 2), split
  EXPECT_EQ(plan.launches[0].dims.block, (Dim3{128, 1, 1}));
  EXPECT_EQ(plan.launches[0].dims.dynamic_smem_bytes, 0u);
  EXPECT_EQ(plan.tensors[3].elements, 4 * 3 * 1001);
  EXPECT_EQ(GemvSpec::m_tile(1), 1);
  EXPECT_EQ(GemvSpec::m_tile(5), 8);
  EXPECT_EQ(GemvSpec::m_tile(16), 16);
}

TEST(GemvSpec, Rejections) {
  const GemvSpec spec;
  EXPECT_NE(spec.rejection(gemm_problem(17, 64, 64, DType::kBF16), gemv(256, 1, 4, 2)), std::nullopt);
  EXPECT_NE(spec.rejection(gemm_problem(1, 64, 64, DType::kBF16, "nn"), gemv(256, 1, 4, 2)), std::nullopt);
  // bf16: 32 lanes x 8 elements = 256; f32: 32 x 4 = 128.
  EXPECT_NE(spec.rejection(gemm_problem(1, 64, 64, DType::kBF16), gemv(128, 1, 4, 2)), std::nullopt);
  EXPECT_EQ(spec.rejection(gemm_problem(1, 64, 64, DType::kF32), gemv(128, 1, 4, 2)), std::nullopt);
  EXPECT_NE(spec.rejection(gemm_problem(1, 64, 64, DType::kF32), gemv(128, 1, 64, 2)), std::nullopt);
  const Problem p = gemm_problem(16, 64, 64, DType::kF16);
  EXPECT_EQ(spec.rejection(p, spec.default_config(p)), std::nullopt);
  EXPECT_FALSE(spec.alignment(p, spec.default_config(p)).empty());
}

TEST(Config, JsonRoundTripInTheTunersForm) {
  const Config c = tiled(128, 64, 32, 2, 2, 3, 1);
  const auto j = c.to_json();  // declaration order, as stored
  EXPECT_EQ(j["template"], "tiled");
  EXPECT_EQ(j["params"]["BLOCK_N"], 64);
  const Config back = Config::from_json(j);
  EXPECT_EQ(back.variant, c.variant);
  EXPECT_EQ(back.params, c.params);
  EXPECT_THROW(Config::from_json(nlohmann::json::parse(R"({"params":{}})")), Error);
  EXPECT_THROW(Config::from_json(nlohmann::json::parse(R"({"template":"gemv","params":{"WARPS":1.5}})")),
               Error);
}

TEST(PackedArgs, SlotsHoldPointersAndScalars) {
  const TiledGemmSpec spec;
  const LaunchPlan plan =
      spec.launch_plan(gemm_problem(9, 10, 11, DType::kF32), tiled(32, 32, 16, 1, 1, 2, 2));
  const std::vector<uint64_t> ptrs = {0x1000, 0x2000, 0x3000, 0x4000};
  PackedArgs main(plan, plan.launches[0], ptrs);
  ASSERT_EQ(main.size(), 11u);
  EXPECT_EQ(*static_cast<uint64_t*>(main.data()[0]), 0x1000u);
  EXPECT_EQ(*static_cast<uint64_t*>(main.data()[3]), 0x4000u);
  EXPECT_EQ(*static_cast<uint64_t*>(main.data()[4]), 0u);  // no bias: a null pointer
  EXPECT_EQ(*static_cast<int32_t*>(main.data()[5]), 9);
  EXPECT_EQ(*static_cast<int32_t*>(main.data()[7]), 11);
  EXPECT_EQ(*static_cast<int32_t*>(main.data()[8]), 11);   // lda
  EXPECT_EQ(*static_cast<int32_t*>(main.data()[10]), 10);  // ldc
  PackedArgs reduce(plan, plan.launches[1], ptrs);
  EXPECT_EQ(*static_cast<uint64_t*>(reduce.data()[1]), 0x3000u);
  EXPECT_EQ(*static_cast<int32_t*>(reduce.data()[2]), 9);
  EXPECT_EQ(*static_cast<int32_t*>(reduce.data()[4]), 10);  // ldc
  EXPECT_THROW(PackedArgs(plan, plan.launches[0], std::span<const uint64_t>(ptrs).first(2)), Error);
}

TEST(LaunchPlan, SetRowStrideMakesEveryLaunchAddressTheStridedView) {
  // nn, split 4: the GEMM takes lda, ldb, ldc; the reduction ldc.
  const TiledGemmSpec spec;
  LaunchPlan plan =
      spec.launch_plan(gemm_problem(9, 10, 11, DType::kBF16, "nn"), tiled(32, 32, 16, 1, 1, 2, 4));
  plan.set_row_stride("c", 30);
  plan.set_row_stride("c", 24);  // again: the rows stay the tensor's
  plan.set_row_stride("a", 13);
  plan.set_row_stride("b", 10);  // B's own row length ("nn": N): unchanged
  const KernelLaunch& main = plan.launches[0];
  EXPECT_EQ(main.args[8].integer, 13);
  EXPECT_EQ(main.args[9].integer, 10);
  EXPECT_EQ(main.args[10].integer, 24);
  EXPECT_EQ(plan.launches[1].args[4].integer, 24);
  EXPECT_EQ(plan.tensors[static_cast<std::size_t>(plan.tensor_index("a"))].elements, 9 * 13);
  EXPECT_EQ(plan.tensors[static_cast<std::size_t>(plan.tensor_index("b"))].elements, 11 * 10);
  EXPECT_EQ(plan.tensors[static_cast<std::size_t>(plan.tensor_index("c"))].elements, 9 * 24);
  // The workspace stays contiguous and has no stride to set; a stride shorter than the row is refused.
  EXPECT_EQ(plan.tensors[static_cast<std::size_t>(plan.tensor_index("workspace"))].elements, 4 * 9 * 10);
  EXPECT_THROW(plan.set_row_stride("workspace", 20), Error);
  EXPECT_THROW(plan.set_row_stride("b", 9), Error);
  EXPECT_THROW(plan.set_row_stride("nope", 20), Error);
}

TEST(LaunchPlan, SetRowStrideReachesTensorMaps) {
  const KernelSpec& tma = find_spec("gemm", "wgmma_tma");
  const Problem p = gemm_problem(200, 300, 520, DType::kBF16, "nt+bias");
  Config c{
      "wgmma_tma",
      {{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 64}, {"STAGES", 4}, {"SPLIT_K", 2}, {"SWIZZLE", 8}}};
  ASSERT_FALSE(tma.rejection(p, c).has_value()) << *tma.rejection(p, c);
  LaunchPlan plan = tma.launch_plan(p, c);
  const KernelLaunch& main = plan.launches[0];
  ASSERT_EQ(main.args[0].kind, ArgSpec::Kind::kTensorMap);
  EXPECT_EQ(main.args[0].integer, 0);  // contiguous as the spec writes it
  EXPECT_EQ(main.args.back().kind, ArgSpec::Kind::kRowStride);
  EXPECT_EQ(main.args.back().tensor, "c");
  plan.set_row_stride("a", 1560);
  plan.set_row_stride("c", 900);
  EXPECT_EQ(plan.launches[0].args[0].integer, 1560);
  EXPECT_EQ(plan.launches[0].args[1].integer, 0);  // b untouched
  EXPECT_EQ(plan.launches[0].args.back().integer, 900);
  EXPECT_EQ(plan.launches[1].name_expression.rfind("ktune_gemm_finish", 0), 0u);
  EXPECT_EQ(plan.launches[1].args[5].integer, 900);  // the finishing pass writes C through ldc
  EXPECT_EQ(plan.tensors[static_cast<std::size_t>(plan.tensor_index("a"))].elements, 200 * 1560);
  // TMA wants global strides in multiples of 16 bytes: 1561 bf16 cannot be encoded (refused before
  // the driver is asked, so this needs no GPU).
  plan.set_row_stride("a", 1561);
  const std::vector<uint64_t> ptrs(plan.tensors.size(), 0x10000);
  try {
    PackedArgs args(plan, plan.launches[0], ptrs);
    ADD_FAILURE() << "a tensor map with rows 3122 bytes apart must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
    EXPECT_NE(std::string(e.what()).find("16 bytes"), std::string::npos) << e.what();
  }
}

TEST(SpecRegistry, SpecsSourcesAndHashes) {
  const SourceLibrary lib = SourceLibrary::builtin();
  for (const auto& [kernel, hash] : current_template_hashes()) {
    SCOPED_TRACE(kernel);
    for (const KernelSpec* spec : specs_of(kernel)) {
      EXPECT_EQ(spec->kernel(), kernel);
      EXPECT_EQ(&find_spec(kernel, spec->variant()), spec);
    }
    for (const auto& f : kernel_source_files(kernel)) EXPECT_TRUE(lib.contains(f)) << f;
    EXPECT_EQ(hash.size(), 16u);
  }
  EXPECT_EQ(kernel_source_files("gemm"),
            (std::vector<std::string>{"gemm_epilogue_reference.cu", "gemm_gemv.cu", "gemm_mma.cu",
                                      "gemm_mma_cluster.cu", "gemm_reference.cu", "gemm_tiled.cu",
                                      "gemm_wgmma.cu", "gemm_wgmma_tma.cu"}));
  EXPECT_EQ(find_spec("gemm", "gemv").source_name(), "gemm_gemv.cu");
  EXPECT_EQ(find_spec("gemm", "mma").source_name(), "gemm_mma.cu");
  EXPECT_THROW(find_spec("gemm", "wmma"), Error);
  EXPECT_TRUE(specs_of("nope").empty());
  EXPECT_TRUE(kernel_source_files("nope").empty());
  EXPECT_EQ(template_source_hash("nope"), "");
}

}  // namespace
}  // namespace ktune::kernel_templates
