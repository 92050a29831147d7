// gemm's row strides in the dispatch runtime, without a GPU: the D8 checks of lda, ldb, ldc, their
// binding as call-time scalars into every launch that addresses A, B or C (the split-K reduction
// and the epilogue pass included) and into wgmma_tma's tensor maps, and the alignment a config
// requires of a stride (the fall-back to the default config on a miss).

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>

#include "kernel_templates/spec_registry.hpp"
#include "ktune/ktune.hpp"
#include "runtime/detail/op_binding.hpp"
#include "runtime/detail/plan_launcher.hpp"
#include "tests/tuner/test_util.hpp"

namespace ktune::runtime::detail {
namespace {

namespace kt = kernel_templates;
using ::ktune::tuner::test::expect_bad_input;

PlanKey gemm(uint8_t mode, DType dtype, int64_t m, int64_t n, int64_t k) {
  return {OpKind::kGemm, mode, dtype, {m, n, k, 0, 0}};
}

PlanLauncher bind(const PlanKey& key, const std::string& variant, const ktune::Config& config) {
  const OpBinding& b = binding_of(OpKind::kGemm);
  const kt::Problem p = make_problem(key);
  const kt::KernelSpec& spec = kt::find_spec("gemm", variant);
  EXPECT_FALSE(spec.rejection(p, config).has_value()) << *spec.rejection(p, config);
  return bind_plan(spec.launch_plan(p, config), spec.alignment(p, config), b.slots, b.scalars, b.row_strides);
}

/// The caller scalars a step's arguments take (kScalarI32 indices), in argument order.
std::vector<int64_t> scalar_indices(const LaunchStep& s) {
  std::vector<int64_t> out;
  for (const LaunchArg& a : s.args) {
    if (a.kind == LaunchArg::Kind::kScalarI32) out.push_back(a.integer);
  }
  return out;
}

TEST(RuntimeGemmStrides, ZeroIsTheRowAndAStrideShorterThanItsRowOrBeyondInt32IsRefused) {
  GemmArgs g{.m = 16, .n = 3072, .k = 1024};
  EXPECT_EQ(gemm_row_strides(g), (std::array<double, 3>{1024, 1024, 3072}));
  g.layout = Layout::kNN;
  EXPECT_EQ(gemm_row_strides(g), (std::array<double, 3>{1024, 3072, 3072}));  // B [k, n]
  // The q slice of a fused [16, 4096 + 2 * 1024] projection output, and A a column slice.
  g = {.m = 16, .n = 3072, .k = 1024, .lda = 2048, .ldc = 6144};
  EXPECT_EQ(gemm_row_strides(g), (std::array<double, 3>{2048, 1024, 6144}));
  expect_bad_input([] { gemm_row_strides({.m = 8, .n = 8, .k = 8, .lda = 7}); }, {"gemm", "lda=7", "(8)"});
  expect_bad_input([] { gemm_row_strides({.m = 8, .n = 9, .k = 8, .ldb = 8, .layout = Layout::kNN}); },
                   {"ldb=8", "(9)"});
  expect_bad_input([] { gemm_row_strides({.m = 8, .n = 8, .k = 8, .ldc = -8}); }, {"ldc=-8"});
  expect_bad_input([] { gemm_row_strides({.m = 8, .n = 8, .k = 8, .ldc = int64_t{1} << 31}); },
                   {"ldc=2147483648", "2^31-1"});
}

TEST(RuntimeGemmStrides, EveryLaunchThatAddressesATensorTakesTheCallersStride) {
  // tiled split-K (GEMM + reduction), mma atomic split-K with an epilogue (zero, GEMM, finishing
  // pass), gemv split-K, wgmma split-K: A, B and C strides are the caller's scalars 0, 1, 2.
  struct Case {
    PlanKey key;
    std::string variant;
    std::vector<std::vector<int64_t>> per_step;  // the scalars each launch takes
  };
  const auto mma_atomic = ktune::Config{"mma",
                                        {{"BLOCK_M", 32},
                                         {"BLOCK_N", 128},
                                         {"BLOCK_K", 64},
                                         {"WARPS_M", 1},
                                         {"WARPS_N", 4},
                                         {"STAGES", 3},
                                         {"SPLIT_K", 8},
                                         {"SPLIT_K_MODE", 1},
                                         {"SWIZZLE", 1}}};
  const PlanKey tiled_key = gemm(1, DType::kF32, 33, 65, 4099);
  ktune::Config tiled = kt::find_spec("gemm", "tiled").default_config(make_problem(tiled_key));
  tiled.set("SPLIT_K", 4);
  const PlanKey gemv_key = gemm(0, DType::kBF16, 3, 257, 4099);
  ktune::Config gemv = kt::find_spec("gemm", "gemv").default_config(make_problem(gemv_key));
  gemv.set("SPLIT_K", 2);
  const ktune::Config wgmma{
      "wgmma",
      {{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 64}, {"STAGES", 4}, {"SPLIT_K", 3}, {"SWIZZLE", 8}}};
  const Case cases[] = {
      {tiled_key, "tiled", {{0, 1, 2}, {2}}},
      {gemm(6, DType::kBF16, 5, 300, 1000), "mma", {{}, {0, 1, 2}, {2}}},
      {gemv_key, "gemv", {{0, 1, 2}, {2}}},
      {gemm(3, DType::kF16, 133, 200, 520), "wgmma", {{0, 1, 2}, {2}}},
  };
  const ktune::Config* configs[] = {&tiled, &mma_atomic, &gemv, &wgmma};
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    const Case& c = cases[i];
    const PlanLauncher l = bind(c.key, c.variant, *configs[i]);
    ASSERT_EQ(l.steps.size(), c.per_step.size()) << c.variant;
    for (std::size_t s = 0; s < l.steps.size(); ++s)
      EXPECT_EQ(scalar_indices(l.steps[s]), c.per_step[s]) << c.variant << " launch " << s;
    EXPECT_EQ(l.scalar_count, 3u) << c.variant;
    // The contiguous strides the spec wrote are gone: no plain i32 equals the problem's k here.
    for (const LaunchStep& s : l.steps) {
      EXPECT_EQ(std::count_if(s.args.begin(), s.args.end(),
                              [&](const LaunchArg& a) {
                                return a.kind == LaunchArg::Kind::kI32 && a.integer == c.key.dims[2];
                              }),
                s.name_expression.find("splitk_reduce") == std::string::npos &&
                        s.name_expression.find("_finish") == std::string::npos &&
                        s.name_expression.find("_zero") == std::string::npos
                    ? 1
                    : 0)
          << c.variant << ": " << s.name_expression;
    }
    for (std::size_t slot = 0; slot < 3; ++slot) {
      EXPECT_EQ(l.slot_stride[slot].scalar, static_cast<int64_t>(slot)) << c.variant;
      EXPECT_EQ(l.slot_stride[slot].element_bytes, static_cast<int64_t>(size_of(c.key.dtype)));
    }
    EXPECT_EQ(l.slot_stride[3].scalar, -1);  // bias: a vector
    // Nothing is required of these templates: any stride is served by the chosen config.
    const std::array<double, 3> odd = {static_cast<double>(c.key.dims[2] + 1),
                                       static_cast<double>(c.key.dims[2] + 3),
                                       static_cast<double>(c.key.dims[1] + 1)};
    EXPECT_EQ(l.misaligned_stride(odd), -1) << c.variant;
  }
}

TEST(RuntimeGemmStrides, TmaMapsTakeTheStrideAndRequireItIn16ByteRows) {
  const PlanKey key = gemm(2, DType::kBF16, 200, 300, 520);  // nt+bias
  const ktune::Config tma{
      "wgmma_tma",
      {{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 64}, {"STAGES", 4}, {"SPLIT_K", 1}, {"SWIZZLE", 8}}};
  const PlanLauncher l = bind(key, "wgmma_tma", tma);
  ASSERT_EQ(l.steps.size(), 1u);
  const auto& args = l.steps[0].args;
  ASSERT_EQ(args[0].kind, LaunchArg::Kind::kTensorMap);
  EXPECT_EQ(args[0].stride_scalar, 0);                               // A's map: lda
  EXPECT_EQ(args[1].stride_scalar, 1);                               // B's map: ldb
  EXPECT_EQ(scalar_indices(l.steps[0]), (std::vector<int64_t>{2}));  // ldc
  EXPECT_EQ(l.slot_align[0], 16);
  EXPECT_EQ(l.slot_align[1], 16);
  // 16-byte rows (multiples of 8 bf16) keep the TMA config; any other stride of A or B misses it
  // and the call goes to the default config (Runtime::Impl::run); C's stride is free.
  EXPECT_EQ(l.misaligned_stride(std::array<double, 3>{520, 520, 300}), -1);
  EXPECT_EQ(l.misaligned_stride(std::array<double, 3>{1560, 528, 301}), -1);
  EXPECT_EQ(l.misaligned_stride(std::array<double, 3>{521, 520, 300}), 0);
  EXPECT_EQ(l.misaligned_stride(std::array<double, 3>{520, 524, 300}), 1);
  alignas(16) static char buf[64];
  const void* aligned[] = {buf, buf, buf + 2, nullptr};
  const void* shifted[] = {buf, buf + 2, buf, nullptr};
  EXPECT_EQ(l.misaligned_slot(aligned, std::array<double, 3>{520, 520, 300}), -1);
  EXPECT_EQ(l.misaligned_slot(shifted, std::array<double, 3>{520, 520, 300}), 1);
  EXPECT_EQ(l.misaligned_slot(aligned, std::array<double, 3>{528, 522, 300}), 1);
}

TEST(RuntimeGemmStrides, ALaunchThatTakesATensorWithoutItsStrideFailsTheBind) {
  // A spec that passes C to a launch but not C's stride would write a strided view as if it were
  // contiguous: the bind refuses it (kRuntime) before anything is compiled or launched.
  const kt::KernelSpec& spec = kt::find_spec("gemm", "tiled");
  const kt::Problem p = make_problem(gemm(0, DType::kF32, 9, 10, 11));
  ktune::Config c = spec.default_config(p);
  c.set("SPLIT_K", 2);
  kt::LaunchPlan plan = spec.launch_plan(p, c);
  auto& reduce_args = plan.launches[1].args;
  reduce_args.erase(std::find_if(reduce_args.begin(), reduce_args.end(), [](const kt::ArgSpec& a) {
    return a.kind == kt::ArgSpec::Kind::kRowStride;
  }));
  const OpBinding& b = binding_of(OpKind::kGemm);
  try {
    bind_plan(plan, spec.alignment(p, c), b.slots, b.scalars, b.row_strides);
    ADD_FAILURE() << "a launch without C's row stride must fail the bind";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(std::string(e.what()).find("'c' without its row stride"), std::string::npos) << e.what();
  }
  // Without row-stride bindings (an operator that takes contiguous tensors only) the spec's
  // contiguous strides stay as constants.
  const PlanLauncher l = bind_plan(spec.launch_plan(p, c), spec.alignment(p, c), b.slots, b.scalars);
  EXPECT_TRUE(scalar_indices(l.steps[0]).empty());
  EXPECT_EQ(l.slot_stride[2].scalar, -1);
}

}  // namespace
}  // namespace ktune::runtime::detail
