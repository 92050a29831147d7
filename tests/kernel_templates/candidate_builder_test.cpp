// KernelSpec data to the harness's candidate description: buffers by name and role, lowered
// function names, arguments, reference and checks.
#include "kernel_templates/candidate_builder.hpp"

#include <gtest/gtest.h>

#include "gemm_samples.hpp"
#include "gemm_wgmma_samples.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

harness::CompileResult fake_compile(const CompileSpec& spec, const std::string& cubin) {
  harness::CompileResult r;
  r.cubin = cubin;
  for (const auto& e : spec.name_expressions) r.lowered_names[e] = "_Z_lowered_" + e;
  return r;
}

TEST(CandidateBuilder, SplitKPartsHaveTwoLaunchesAndSharedInputs) {
  const KernelSpec& spec = find_spec("gemm", "tiled");
  const Problem p = testing::gemm_problem(77, 93, 331, DType::kBF16, "nn");
  const Config c = testing::tiled_samples()[2];  // split 4
  const auto compiled = fake_compile(spec.compile_spec(p, c), "CUBIN");
  const auto ref_compiled = fake_compile(spec.reference(p).compile, "REFCUBIN");
  const CandidateParts parts = make_candidate_parts(spec, p, c, compiled, ref_compiled);

  EXPECT_EQ(parts.name, "gemm.bf16.nn.32x64x16.w1x2.s2.sk4");
  std::vector<std::string> names;
  for (const auto& b : parts.buffers) names.push_back(b.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "workspace", "c_ref"}));
  EXPECT_EQ(parts.buffers[0].init, measure::BufferSpec::Init::kFill);
  EXPECT_EQ(parts.buffers[0].count, 77u * 331u);
  EXPECT_EQ(parts.buffers[2].init, measure::BufferSpec::Init::kPoison);
  EXPECT_EQ(parts.buffers[3].dtype, DType::kF32);
  EXPECT_EQ(parts.buffers[4].dtype, DType::kF32);

  ASSERT_EQ(parts.launches.size(), 2u);
  EXPECT_EQ(parts.launches[0].function,
            "_Z_lowered_ktune_gemm_tiled<32,64,16,1,2,2,4,__nv_bfloat16,false,false,false>");
  EXPECT_EQ(parts.launches[0].cubin, "CUBIN");
  EXPECT_EQ(parts.launches[0].grid, (std::array<uint32_t, 3>{2, 3, 4}));
  ASSERT_EQ(parts.launches[0].args.size(), 11u);
  EXPECT_EQ(parts.launches[0].args[1].buffer, "b");
  EXPECT_EQ(parts.launches[0].args[3].buffer, "workspace");
  EXPECT_EQ(parts.launches[0].args[6].i, 93);
  // The row strides reach the worker as contiguous i32s: lda = K, ldb = N ("nn"), ldc = N.
  EXPECT_EQ(parts.launches[0].args[8].kind, measure::KernelArg::Kind::kI32);
  EXPECT_EQ(parts.launches[0].args[8].i, 331);
  EXPECT_EQ(parts.launches[0].args[9].i, 93);
  EXPECT_EQ(parts.launches[0].args[10].i, 93);
  EXPECT_EQ(parts.launches[1].args[4].kind, measure::KernelArg::Kind::kI32);
  EXPECT_EQ(parts.launches[1].args[4].i, 93);
  EXPECT_EQ(parts.reference->cubin, "REFCUBIN");
  ASSERT_EQ(parts.checks.size(), 1u);
  EXPECT_EQ(parts.checks[0].output, "c");
  EXPECT_EQ(parts.checks[0].reference, "c_ref");
  EXPECT_EQ(parts.flops, 2.0 * 77 * 93 * 331);
  EXPECT_EQ(parts.main_launch, 0u);
  // The request carries the whole sequence: the GEMM, then the reduction, from one cubin.
  const measure::CandidateRequest r = make_candidate_request(parts);
  ASSERT_EQ(r.launches.size(), 2u);
  EXPECT_EQ(r.main_launch, 0u);
  EXPECT_EQ(r.launches[1].function, "_Z_lowered_ktune_gemm_splitk_reduce<__nv_bfloat16>");
  EXPECT_EQ(r.launches[1].cubin, "CUBIN");
  EXPECT_EQ(r.launches[1].args[0].buffer, "workspace");
  EXPECT_EQ(r.launches[1].args[1].buffer, "c");
  EXPECT_EQ(r.launches[1].args[5].i, 4);  // the reduction sums SPLIT_K slices
}

TEST(CandidateBuilder, AtomicSplitKZeroesItsWorkspaceInsideTheSequence) {
  const KernelSpec& spec = find_spec("gemm", "mma");
  const Problem p = testing::gemm_problem(16, 4096, 4096, DType::kBF16, "nt");
  Config c = spec.default_config(p);
  c.set("SPLIT_K", 4);
  c.set("SPLIT_K_MODE", 1);
  ASSERT_FALSE(spec.rejection(p, c).has_value()) << *spec.rejection(p, c);
  const auto parts = make_candidate_parts(spec, p, c, fake_compile(spec.compile_spec(p, c), "MMA"),
                                          fake_compile(spec.reference(p).compile, "R"));
  const measure::CandidateRequest r = make_candidate_request(parts);
  ASSERT_EQ(r.launches.size(), 3u);
  EXPECT_NE(r.launches[0].function.find("ktune_gemm_zero"), std::string::npos) << r.launches[0].function;
  EXPECT_EQ(r.launches[0].args[0].buffer, "workspace");
  EXPECT_EQ(r.launches[0].args[1].i, 16 * 4096);  // every f32 sum of C zeroed, each call
  EXPECT_EQ(r.main_launch, 1u);                   // resources are the GEMM's, not the zeroing's
  EXPECT_NE(r.launches[1].function.find("ktune_gemm_mma<"), std::string::npos) << r.launches[1].function;
  EXPECT_EQ(r.launches[1].grid[2], 4u);
  EXPECT_EQ(r.launches[2].args[0].buffer, "workspace");
  for (const auto& b : r.buffers) {
    if (b.name == "workspace") {
      EXPECT_EQ(b.count, 16u * 4096u);  // one sum per element, not per split
    }
  }
}

TEST(CandidateBuilder, SingleLaunchRequest) {
  const KernelSpec& spec = find_spec("gemm", "gemv");
  const Problem p = testing::gemm_problem(2, 4096, 4096, DType::kF16, "nt");
  const Config c = testing::gemv_samples()[0];  // no split
  const auto parts = make_candidate_parts(spec, p, c, fake_compile(spec.compile_spec(p, c), "X"),
                                          fake_compile(spec.reference(p).compile, "R"));
  const measure::CandidateRequest r = make_candidate_request(parts);
  EXPECT_EQ(r.name, "gemm.f16.nt.gemv.k256.sk1.w4.r2");
  EXPECT_EQ(r.buffers.size(), 4u);  // a, b, c, c_ref
  ASSERT_EQ(r.launches.size(), 1u);
  EXPECT_EQ(r.launches[0].args[3].kind, measure::KernelArg::Kind::kU64);  // null workspace
  EXPECT_EQ(r.launches[0].args[3].i, 0);
  ASSERT_TRUE(r.reference.has_value());
  EXPECT_EQ(r.bytes_moved, (2.0 * 4096 + 4096.0 * 4096 + 2 * 4096) * 2);
  const LaunchPlan plan = spec.launch_plan(p, c);
  EXPECT_THROW(to_launch_spec(plan, plan.launches[0], harness::CompileResult{}), Error);
}

TEST(CandidateBuilder, AStridedTensorMapIsNotMeasuredAsAContiguousOne) {
  // The measurement path carries contiguous tensor maps only: a plan made strided
  // (LaunchPlan::set_row_stride) must fail there rather than be read with the wrong stride.
  const KernelSpec& spec = find_spec("gemm", "wgmma_tma");
  const Problem p = testing::gemm_problem(200, 300, 520, DType::kBF16, "nt");
  Config c = testing::wgmma_config(128, 128, 4, 8);
  c.variant = "wgmma_tma";
  ASSERT_FALSE(spec.rejection(p, c).has_value()) << *spec.rejection(p, c);
  LaunchPlan plan = spec.launch_plan(p, c);
  const auto compiled = fake_compile(spec.compile_spec(p, c), "X");
  EXPECT_NO_THROW(to_launch_spec(plan, plan.launches[0], compiled));
  plan.set_row_stride("a", 528);
  try {
    to_launch_spec(plan, plan.launches[0], compiled);
    ADD_FAILURE() << "a strided tensor map must be refused by the measurement path";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row stride 528"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ktune::kernel_templates
