// The dispatch runtime's operator path without a GPU: the D8 checks each entry point makes before
// any launch (dims, pointers, the problems the templates cannot serve), the binding of every
// operator's plan to its slots and call-time scalars, and the plan choice from a database made here.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "cache/best_index.hpp"
#include "cache/config_cache.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/ktune.hpp"
#include "runtime/detail/op_binding.hpp"
#include "runtime/detail/plan_chooser.hpp"
#include "runtime/detail/plan_launcher.hpp"
#include "tests/tuner/test_util.hpp"

namespace ktune::runtime::detail {
namespace {

namespace test = ::ktune::tuner::test;

namespace kt = kernel_templates;
using test::expect_bad_input;

PlanKey key(OpKind op, uint8_t mode, DType dtype, std::array<int64_t, kMaxOpDims> dims) {
  return {op, mode, dtype, dims};
}

TEST(RuntimeOpsChecks, DimsOutsideTheKernelsRangeNameTheOperatorAndTheDimension) {
  expect_bad_input([] { check_dims("rmsnorm", {{"rows", 0}, {"hidden", 4096}}); }, {"rmsnorm", "rows=0"});
  expect_bad_input([] { check_dims("softmax", {{"rows", 3}, {"cols", -5}}); }, {"softmax", "cols=-5"});
  expect_bad_input(
      [] {
        check_dims("swiglu", {{"m", 2}, {"i", int64_t{1} << 31}});
      },
      {"swiglu", "i=2147483648"});
  EXPECT_NO_THROW(check_dims("rmsnorm_rope", {{"tokens", 1}, {"head_dim", 2147483647}}));
}

TEST(RuntimeOpsChecks, NullAndMisalignedPointersAreRefusedByName) {
  alignas(16) static char buf[64];
  expect_bad_input(
      [] {
        check_pointers("rmsnorm", {{"x", buf, 2}, {"w", nullptr, 2}, {"y", buf, 2}});
      },
      {"rmsnorm", "w is null"});
  expect_bad_input(
      [] {
        check_pointers("softmax", {{"x", buf + 2, 4}, {"y", buf, 4}});
      },
      {"softmax", "x at", "not aligned to its 4-byte"});
  expect_bad_input([] { check_pointers("rmsnorm_rope", {{"positions", buf + 1, 4}}); }, {"positions"});
  EXPECT_NO_THROW(check_pointers("swiglu", {{"x", buf + 2, 2}, {"out", buf + 6, 2}}));
}

TEST(RuntimeOpsChecks, ProblemsTheTemplatesCannotServeAreBadInputNamingWhy) {
  // A head_dim rmsnorm_rope has no kernel for, an odd one, a dtype the operators lack, swiglu's
  // grid limit, an unknown mode code.
  expect_bad_input(
      [] {
        check_problem(key(OpKind::kRmsNormRope, 0, DType::kBF16, {7, 32, 8, 96, 0}), "sm_90");
      },
      {"rmsnorm_rope", "head_dim", "96"});
  expect_bad_input(
      [] {
        check_problem(key(OpKind::kRmsNormRope, 1, DType::kF16, {7, 32, 8, 63, 0}), "sm_90");
      },
      {"rmsnorm_rope", "63"});
  expect_bad_input(
      [] {
        check_problem(key(OpKind::kRmsNorm, 0, DType::kFP8E4M3, {7, 4095, 0, 0, 0}), "sm_90");
      },
      {"rmsnorm", "fp8e4m3"});
  expect_bad_input(
      [] {
        check_problem(key(OpKind::kSoftmax, 2, DType::kFP8E4M3, {7, 4095, 0, 0, 0}), "sm_90");
      },
      {"softmax", "fp8e4m3"});
  expect_bad_input(
      [] {
        check_problem(key(OpKind::kSwiglu, 1, DType::kBF16, {70000, 11, 0, 0, 0}), "sm_90");
      },
      {"swiglu", "65535", "70000"});
  expect_bad_input(
      [] {
        check_problem(key(OpKind::kSoftmax, 7, DType::kBF16, {7, 4095, 0, 0, 0}), "sm_90");
      },
      {"softmax", "mode"});
  for (const PlanKey& k : {key(OpKind::kRmsNorm, 1, DType::kBF16, {7, 4095, 0, 0, 0}),
                           key(OpKind::kRmsNormRope, 1, DType::kF32, {5, 7, 3, 128, 0}),
                           key(OpKind::kSoftmax, 1, DType::kF16, {3, 100003, 0, 0, 0}),
                           key(OpKind::kSwiglu, 0, DType::kBF16, {9, 1377, 0, 0, 0}),
                           key(OpKind::kGemm, 1, DType::kBF16, {37, 301, 515, 0, 0}),
                           key(OpKind::kGemm, 0, DType::kF32, {1, 7, 3, 0, 0}),
                           key(OpKind::kGemm, 0, DType::kF16, {4096, 4096, 4096, 0, 0})}) {
    EXPECT_NO_THROW(check_problem(k, "sm_90")) << describe(k);
  }
}

// The runtime's entry points compute mode codes (gemm: 2 * epilogue + (layout == nn); the others the
// enum's value); the binding's modes come from the catalog, so its order must stay what they assume.
TEST(RuntimeOpsChecks, ModeCodesNameTheCatalogLayouts) {
  const std::vector<std::pair<OpKind, std::vector<std::string>>> want = {
      {OpKind::kGemm,
       {"nt", "nn", "nt+bias", "nn+bias", "nt+silu", "nn+silu", "nt+bias+silu", "nn+bias+silu"}},
      {OpKind::kRmsNorm, {"", "residual"}},
      {OpKind::kRmsNormRope, {"neox", "gptj"}},
      {OpKind::kSoftmax, {"", "causal", "padding"}},
      {OpKind::kSwiglu, {"fused", "split"}},
      {OpKind::kDecodeAttention, {"", "paged"}},
      {OpKind::kFp8Gemm, {"nt", "nt+rowcol"}},
      {OpKind::kRopeAppend,
       {"neox", "gptj", "neox+norm", "gptj+norm", "neox+paged", "gptj+paged", "neox+norm+paged",
        "gptj+norm+paged"}},
  };
  for (const auto& [op, modes] : want) {
    EXPECT_EQ(binding_of(op).modes, modes) << binding_of(op).kernel;
    for (std::size_t m = 0; m < modes.size(); ++m) {
      PlanKey k{};
      k.op = op;
      k.mode = static_cast<uint8_t>(m);
      k.dtype = DType::kBF16;
      EXPECT_EQ(make_problem(k).layout, modes[m]) << binding_of(op).kernel << " mode " << m;
    }
  }
}

TEST(RuntimeOpsChecks, KeysDescribeThemselvesAndHashByEveryField) {
  const PlanKey a = key(OpKind::kSoftmax, 1, DType::kBF16, {7, 4095, 0, 0, 0});
  EXPECT_EQ(describe(a), "softmax rows=7,cols=4095 bf16 causal");
  PlanKey b = a;
  b.mode = 2;
  PlanKey c = a;
  c.dtype = DType::kF16;
  PlanKey d = a;
  d.op = OpKind::kRmsNorm;
  PlanKeyHash h;
  for (const PlanKey& other : {b, c, d}) {
    EXPECT_FALSE(a == other);
    EXPECT_NE(h(a), h(other));
  }
}

/// Every operator's default plan binds to its entry point: tensors to slots, the caller's
/// scalars where the spec wrote its constants. Fails without a GPU if a spec moves an argument.
TEST(RuntimeOpsBinding, EveryOperatorsPlanBindsToItsSlotsAndScalars) {
  struct Case {
    PlanKey key;
    std::vector<std::string> used;
    std::size_t scalars;
  };
  const Case cases[] = {
      {key(OpKind::kRmsNorm, 0, DType::kBF16, {7, 4095, 0, 0, 0}), {"x", "w", "y"}, 1},
      {key(OpKind::kRmsNorm, 1, DType::kBF16, {7, 4095, 0, 0, 0}),
       {"x", "residual", "w", "y", "residual_out"},
       1},
      {key(OpKind::kRmsNormRope, 0, DType::kBF16, {5, 7, 3, 128, 0}),
       {"q", "k", "q_weight", "k_weight", "cos_sin", "positions", "q_out", "k_out"},
       2},
      {key(OpKind::kSoftmax, 0, DType::kF32, {3, 1001, 0, 0, 0}), {"x", "y"}, 1},
      {key(OpKind::kSoftmax, 2, DType::kF32, {3, 1001, 0, 0, 0}), {"x", "y", "lengths"}, 1},
      {key(OpKind::kSwiglu, 0, DType::kF16, {9, 1377, 0, 0, 0}), {"x", "out"}, 0},
      {key(OpKind::kSwiglu, 1, DType::kF16, {9, 1377, 0, 0, 0}), {"gate", "up", "out"}, 0},
      // rope_append: the cache geometry and max_pos (5 i32) and eps; the weights in "+norm" modes
      // (2, 3, 6, 7), the block table in "+paged" ones (4 to 7).
      {key(OpKind::kRopeAppend, 0, DType::kBF16, {5, 14, 2, 64, 64}),
       {"q", "k", "v", "cos_sin", "positions", "q_out", "k_cache", "v_cache"},
       6},
      {key(OpKind::kRopeAppend, 7, DType::kBF16, {5, 16, 8, 128, 64}),
       {"q", "k", "v", "q_weight", "k_weight", "cos_sin", "positions", "block_table", "q_out", "k_cache",
        "v_cache"},
       6},
  };
  for (const Case& c : cases) {
    const OpBinding& b = binding_of(c.key.op);
    const kt::Problem p = make_problem(c.key);
    const kt::KernelSpec& spec = kt::find_spec(b.kernel, b.default_variant);
    const ktune::Config config = spec.default_config(p);
    const PlanLauncher l =
        bind_plan(spec.launch_plan(p, config), spec.alignment(p, config), b.slots, b.scalars);
    ASSERT_EQ(l.steps.size(), 1u) << describe(c.key);
    EXPECT_EQ(l.workspace_bytes, 0u);
    for (std::size_t i = 0; i < b.slots.size(); ++i) {
      const bool expected = std::find(c.used.begin(), c.used.end(), b.slots[i]) != c.used.end();
      EXPECT_EQ(l.slot_used[i], expected) << describe(c.key) << " slot " << b.slots[i];
    }
    const auto scalars =
        std::count_if(l.steps[0].args.begin(), l.steps[0].args.end(), [](const LaunchArg& a) {
          return a.kind == LaunchArg::Kind::kScalarF32 || a.kind == LaunchArg::Kind::kScalarI32;
        });
    EXPECT_EQ(static_cast<std::size_t>(scalars), c.scalars) << describe(c.key);
  }
  // softmax's padding lengths are int32: the only alignment a launch must have.
  const OpBinding& sm = binding_of(OpKind::kSoftmax);
  const kt::Problem pp = make_problem(key(OpKind::kSoftmax, 2, DType::kF32, {3, 1001, 0, 0, 0}));
  const kt::KernelSpec& spec = kt::find_spec("softmax", "rowwise");
  const PlanLauncher l = bind_plan(spec.launch_plan(pp, spec.default_config(pp)),
                                   spec.alignment(pp, spec.default_config(pp)), sm.slots, sm.scalars);
  EXPECT_EQ(l.slot_align[2], 4);
  EXPECT_EQ(l.slot_align[0], 0);
}

// A miss's default gemm template: GEMV for decode sizes (with or without an epilogue), tensor cores
// for f16/bf16, SIMT tiled for f32 (epilogues included); each of them binds.
TEST(RuntimeOpsBinding, GemmDefaultsPreferTheTemplateThatFitsTheProblem) {
  struct Case {
    PlanKey key;
    const char* arch;
    const char* variant;
  };
  const Case cases[] = {
      {key(OpKind::kGemm, 0, DType::kBF16, {1, 2048, 1024, 0, 0}), "sm_90", "gemv"},
      {key(OpKind::kGemm, 0, DType::kBF16, {16, 4096, 4096, 0, 0}), "sm_90", "gemv"},
      {key(OpKind::kGemm, 0, DType::kBF16, {17, 4096, 4096, 0, 0}), "sm_90", "mma"},
      {key(OpKind::kGemm, 1, DType::kF16, {8, 512, 256, 0, 0}), "sm_90", "mma"},     // nn: no gemv
      {key(OpKind::kGemm, 6, DType::kBF16, {1, 512, 256, 0, 0}), "sm_90", "gemv"},   // nt+bias+silu
      {key(OpKind::kGemm, 2, DType::kBF16, {1, 1152, 896, 0, 0}), "sm_90", "gemv"},  // nt+bias
      {key(OpKind::kGemm, 3, DType::kBF16, {1, 512, 256, 0, 0}), "sm_90", "mma"},    // nn+bias: no gemv
      {key(OpKind::kGemm, 2, DType::kF32, {64, 512, 256, 0, 0}), "sm_90", "tiled"},  // f32 nt+bias
      {key(OpKind::kGemm, 0, DType::kF32, {64, 512, 256, 0, 0}), "sm_90", "tiled"},
  };
  for (const Case& c : cases) {
    const kt::KernelSpec& spec = default_spec(c.key, c.arch);
    EXPECT_EQ(spec.variant(), c.variant) << describe(c.key) << " on " << c.arch;
    const kt::Problem p = make_problem(c.key);
    const OpBinding& b = binding_of(c.key.op);
    EXPECT_NO_THROW(bind_plan(spec.launch_plan(p, spec.default_config(p)),
                              spec.alignment(p, spec.default_config(p)), b.slots, b.scalars, b.row_strides))
        << describe(c.key);
  }
}

TEST(RuntimeOpsBinding, SplitKWorkspaceComesFromTheRuntimeNotASlot) {
  const OpBinding& b = binding_of(OpKind::kGemm);
  const PlanKey k = key(OpKind::kGemm, 0, DType::kBF16, {3, 257, 4099, 0, 0});
  const kt::Problem p = make_problem(k);
  const kt::KernelSpec& spec = kt::find_spec("gemm", "tiled");
  ktune::Config c = spec.default_config(p);
  c.set("SPLIT_K", 4);
  ASSERT_FALSE(spec.rejection(p, c)) << *spec.rejection(p, c);
  const PlanLauncher l =
      bind_plan(spec.launch_plan(p, c), spec.alignment(p, c), b.slots, b.scalars, b.row_strides);
  EXPECT_GE(l.steps.size(), 2u);                               // GEMM + reduction
  EXPECT_GE(l.workspace_bytes, std::size_t{4} * 3 * 257 * 4);  // SPLIT_K f32 partials of C
  EXPECT_EQ(l.workspace_bytes % kWorkspaceAlign, 0u);
  bool saw_workspace = false;
  for (const auto& s : l.steps)
    for (const auto& a : s.args) saw_workspace |= a.kind == LaunchArg::Kind::kWorkspace;
  EXPECT_TRUE(saw_workspace);
}

TEST(RuntimeOpsBinding, SoftmaxSplitRowsTakeTheCallersScaleInBothLaunchesAndARuntimeWorkspace) {
  const OpBinding& b = binding_of(OpKind::kSoftmax);
  const PlanKey k = key(OpKind::kSoftmax, 2, DType::kF32, {3, 100003, 0, 0, 0});
  const kt::Problem p = make_problem(k);
  const kt::KernelSpec& spec = kt::find_spec("softmax", "rowwise");
  const ktune::Config c{"rowwise", {{"THREADS", 256}, {"ROWS", 1}, {"VEC", 4}, {"ONLINE", 1}, {"SPLIT", 4}}};
  ASSERT_FALSE(spec.rejection(p, c)) << *spec.rejection(p, c);
  const PlanLauncher l = bind_plan(spec.launch_plan(p, c), spec.alignment(p, c), b.slots, b.scalars);
  ASSERT_EQ(l.steps.size(), 2u);  // partial (max, sum) per segment, then the output
  for (const LaunchStep& s : l.steps) {
    const auto scales = std::count_if(s.args.begin(), s.args.end(), [](const LaunchArg& a) {
      return a.kind == LaunchArg::Kind::kScalarF32;
    });
    EXPECT_EQ(scales, 1) << s.name_expression;
    EXPECT_TRUE(std::none_of(s.args.begin(), s.args.end(),
                             [](const LaunchArg& a) { return a.kind == LaunchArg::Kind::kF32; }))
        << "the spec's own scale left in " << s.name_expression;
  }
  EXPECT_GE(l.workspace_bytes, std::size_t{3} * 4 * 2 * 4);  // rows * SPLIT (max, sum) f32
  EXPECT_TRUE(l.slot_used[2]);                               // lengths
}

TEST(RuntimeOpsBinding, APlanTensorWithoutASlotOrAMovedScalarIsRefused) {
  kt::LaunchPlan plan;
  plan.tensors = {{"x", kt::TensorRole::kInput, ktune::DType::kF32, 8},
                  {"bias", kt::TensorRole::kInput, ktune::DType::kF32, 8}};
  kt::KernelLaunch l;
  l.name_expression = "k<1>";
  l.args = {kt::ArgSpec::of_tensor("x"), kt::ArgSpec::of_tensor("bias"), kt::ArgSpec::f32(0.5f)};
  plan.launches = {l};
  const std::vector<std::string> slots = {"x", "y"};
  expect_bad_input([&] { bind_plan(plan, {}, slots, {}); }, {"bias", "x, y"});
  plan.tensors.pop_back();
  plan.launches[0].args[1] = kt::ArgSpec::i32(3);
  const ScalarBinding wrong[] = {{ScalarBinding::kEveryLaunch, 2, ScalarBinding::Kind::kF32, 0.25, 0}};
  try {
    bind_plan(plan, {}, slots, wrong);
    ADD_FAILURE() << "a scalar binding that does not find the spec's value must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(std::string(e.what()).find("argument 2"), std::string::npos) << e.what();
  }
  const ScalarBinding right[] = {{ScalarBinding::kEveryLaunch, 2, ScalarBinding::Kind::kF32, 0.5, 0}};
  EXPECT_EQ(bind_plan(plan, {}, slots, right).steps[0].args[2].kind, LaunchArg::Kind::kScalarF32);
  // By value: the constant must be somewhere in the plan.
  const ScalarBinding by_value[] = {
      {ScalarBinding::kEveryLaunch, ScalarBinding::kByValue, ScalarBinding::Kind::kF32, 0.5, 0}};
  EXPECT_EQ(bind_plan(plan, {}, slots, by_value).steps[0].args[2].kind, LaunchArg::Kind::kScalarF32);
  const ScalarBinding absent[] = {
      {ScalarBinding::kEveryLaunch, ScalarBinding::kByValue, ScalarBinding::Kind::kF32, 0.75, 0}};
  try {
    bind_plan(plan, {}, slots, absent);
    ADD_FAILURE() << "a by-value binding that matches nothing must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
  }
}

TEST(RuntimeOpsDecodeFp8, DecodeAttentionChecksItsCallGeometry) {
  // batch, heads_q, heads_kv, seq, head_dim; extra = seq_max.
  PlanKey k = key(OpKind::kDecodeAttention, 0, DType::kBF16, {3, 28, 4, 1000, 96});
  k.extra = 1000;
  expect_bad_input([&] { check_problem(k, "sm_90"); }, {"decode_attention", "head_dim"});
  k.dims = {3, 28, 4, 1001, 128};
  expect_bad_input([&] { check_problem(k, "sm_90"); }, {"decode_attention", "seq=1001", "seq_max=1000"});
  k.dims = {3, 28, 4, 1000, 128};
  k.dtype = DType::kF16;
  expect_bad_input([&] { check_problem(k, "sm_90"); }, {"decode_attention", "f16"});
  k.dtype = DType::kBF16;
  EXPECT_NO_THROW(check_problem(k, "sm_90")) << describe(k);
  EXPECT_NE(describe(k).find("seq_max=1000"), std::string::npos) << describe(k);
}

TEST(RuntimeOpsDecodeFp8, DecodeAttentionPlansBindTheScaleTheLengthsAndTheSplitKvWorkspace) {
  const OpBinding& b = binding_of(OpKind::kDecodeAttention);
  const kt::KernelSpec& spec = kt::find_spec("decode_attention", "splitkv");
  for (bool lens : {false, true}) {
    PlanKey k = key(OpKind::kDecodeAttention, 0, DType::kBF16, {2, 28, 4, 4099, 128});
    k.extra = 5000;
    k.flags = lens ? kContextLens : 0;
    const kt::Problem p = make_problem(k);
    ktune::Config c = spec.default_config(p);
    c.set("SPLIT_K", 8);
    ASSERT_FALSE(spec.rejection(p, c)) << *spec.rejection(p, c);
    const PlanLauncher l =
        bind_plan(launch_plan_for(k, spec, p, c), spec.alignment(p, c), b.slots, b.scalars);
    ASSERT_EQ(l.steps.size(), 2u);  // the split-KV partials, then the (max, sum) combine
    EXPECT_GT(l.workspace_bytes, 0u);
    EXPECT_EQ(l.slot_used[4], lens) << "context_lens";
    EXPECT_EQ(l.slot_align[1], 16);  // k
    EXPECT_EQ(l.slot_align[2], 16);  // v
    const auto scales = std::count_if(l.steps[0].args.begin(), l.steps[0].args.end(), [](const LaunchArg& a) {
      return a.kind == LaunchArg::Kind::kScalarF32;
    });
    EXPECT_EQ(scales, 1);
    // seq_max is the K/V head stride the plan passes: the key's, not seq.
    EXPECT_TRUE(std::any_of(l.steps[0].args.begin(), l.steps[0].args.end(), [](const LaunchArg& a) {
      return a.kind == LaunchArg::Kind::kI32 && a.integer == 5000;
    }));
  }
}

TEST(RuntimeOpsDecodeFp8, Fp8GemmBindsBothScalingModesAndRefusesOldArchesAndOddK) {
  const OpBinding& b = binding_of(OpKind::kFp8Gemm);
  const kt::KernelSpec& spec = kt::find_spec("fp8_gemm", "mma");
  for (uint8_t mode : {uint8_t{0}, uint8_t{1}}) {
    const PlanKey k = key(OpKind::kFp8Gemm, mode, DType::kFP8E4M3, {37, 301, 512, 0, 0});
    EXPECT_NO_THROW(check_problem(k, "sm_90")) << describe(k);
    const kt::Problem p = make_problem(k);
    const ktune::Config c = spec.default_config(p);
    const PlanLauncher l =
        bind_plan(launch_plan_for(k, spec, p, c), spec.alignment(p, c), b.slots, b.scalars);
    EXPECT_TRUE(std::all_of(l.slot_used.begin(), l.slot_used.end(), [](bool u) { return u; }));
    EXPECT_EQ(l.slot_align[0], 16);  // a
    EXPECT_EQ(l.slot_align[2], 4);   // a_scale
  }
  expect_bad_input(
      [] {
        check_problem(key(OpKind::kFp8Gemm, 0, DType::kFP8E4M3, {16, 64, 100, 0, 0}), "sm_90");
      },
      {"fp8_gemm", "100"});
  expect_bad_input(
      [] {
        check_problem(key(OpKind::kFp8Gemm, 0, DType::kBF16, {16, 64, 128, 0, 0}), "sm_90");
      },
      {"fp8_gemm", "bf16"});
  const PlanKey ok = key(OpKind::kFp8Gemm, 0, DType::kFP8E4M3, {16, 64, 128, 0, 0});
  expect_bad_input([&] { check_arch(ok, "sm_80"); }, {"fp8_gemm", "sm_89"});
  EXPECT_NO_THROW(check_arch(ok, "sm_90"));
  EXPECT_NO_THROW(check_arch(key(OpKind::kRmsNorm, 0, DType::kBF16, {1, 8, 0, 0, 0}), "sm_70"));
}

// ---- plan choice from a database written here

class RuntimeOpsChoice : public ::testing::Test {
 protected:
  static constexpr const char* kGpu = "Test GPU";
  /// The device the plans are chosen for: the database's GPU, an sm_90 part.
  static harness::DeviceInfo device() {
    harness::DeviceInfo d;
    d.name = kGpu;
    d.cc_major = 9;
    return d;
  }

  void SetUp() override {
    db_ = std::make_unique<cache::ConfigCache>(cache::ConfigCache::open(file_.path()));
    gpu_ = db_->upsert_gpu({kGpu, 9, 0, 132, int64_t{141} << 30});
    run_ = db_->begin_run({});
  }

  /// Stores `config` as the winner of (kernel, shape, dtype, layout) with the built-in templates' hash.
  void store_best(const std::string& kernel, const std::string& shape, DType dtype, const std::string& layout,
                  const ktune::Config& config, const std::string& name) {
    const int64_t kid = db_->upsert_kernel({kernel, kt::template_source_hash(kernel)});
    cache::Measurement m;
    m.shape = shape;
    m.dtype = dtype;
    m.layout = layout;
    m.config_name = name;
    m.config_json = config.to_json().dump();
    m.stats = cache::Stats{3.5, 3.4, 3.6, 3.7, 0.05, 20};
    db_->set_best(db_->record(run_, gpu_, kid, {m}).front());
  }

  cache::BestIndex index() const {
    std::map<std::string, std::string> hashes;
    for (OpKind op : kAllOps) hashes[binding_of(op).kernel] = kt::template_source_hash(binding_of(op).kernel);
    return cache::BestIndex::load(*db_, kGpu, hashes);
  }

  test::TempFile file_{"ops.db", ""};
  std::unique_ptr<cache::ConfigCache> db_;
  int64_t gpu_ = 0, run_ = 0;
};

TEST_F(RuntimeOpsChoice, TunedNearestDefaultAndErrorPerOperatorAndMode) {
  const ktune::Config rms{"rowwise", {{"THREADS", 128}, {"ROWS", 2}, {"VEC", 8}, {"REG", 0}}};
  store_best("rmsnorm", "rows=7,hidden=4095", DType::kBF16, "residual", rms,
             "rmsnorm.bf16.residual.t128.r2.v8.reg0");
  const ktune::Config sm{"rowwise", {{"THREADS", 64}, {"ROWS", 4}, {"VEC", 4}, {"ONLINE", 1}}};
  store_best("softmax", "rows=16,cols=32000", DType::kF32, "causal", sm, "softmax.f32.causal.t64.r4.v4.on1");
  const cache::BestIndex idx = index();

  auto [c1, tuned] =
      choose_plan(idx, MissPolicy::kNearest, device(), key(OpKind::kRmsNorm, 1, DType::kBF16, {7, 4095}));
  EXPECT_EQ(tuned.source, PlanInfo::Source::kTuned);
  EXPECT_EQ(tuned.config_name, "rmsnorm.bf16.residual.t128.r2.v8.reg0");
  EXPECT_DOUBLE_EQ(tuned.tuned_median_us, 3.5);
  EXPECT_EQ(c1.params, rms.params);

  // The same shape without the residual is another key: not tuned, no tuned shape of its mode.
  auto [c2, plain] =
      choose_plan(idx, MissPolicy::kNearest, device(), key(OpKind::kRmsNorm, 0, DType::kBF16, {7, 4095}));
  EXPECT_EQ(plain.source, PlanInfo::Source::kDefault);
  EXPECT_EQ(c2.variant, "rowwise");

  auto [c3, near] =
      choose_plan(idx, MissPolicy::kNearest, device(), key(OpKind::kSoftmax, 1, DType::kF32, {17, 30011}));
  EXPECT_EQ(near.source, PlanInfo::Source::kNearest);
  EXPECT_EQ(near.tuned_shape, "rows=16,cols=32000");
  EXPECT_EQ(c3.params, sm.params);

  auto [c4, dflt] =
      choose_plan(idx, MissPolicy::kDefault, device(), key(OpKind::kSoftmax, 1, DType::kF32, {17, 30011}));
  EXPECT_EQ(dflt.source, PlanInfo::Source::kDefault);
  EXPECT_EQ(dflt.config_name,
            kt::find_spec("softmax", "rowwise")
                .canonical_name(make_problem(key(OpKind::kSoftmax, 1, DType::kF32, {17, 30011})), c4));

  try {
    choose_plan(idx, MissPolicy::kError, device(), key(OpKind::kSwiglu, 1, DType::kBF16, {9, 1377}));
    ADD_FAILURE() << "a miss with MissPolicy::kError must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    const std::string what = e.what();
    EXPECT_NE(what.find("ktune tune --kernel swiglu --shape m=9,i=1377 --dtype bf16 --layout split"),
              std::string::npos)
        << what;
  }
}

TEST_F(RuntimeOpsChoice, ANearestConfigThatCannotServeTheShapeFallsBackToTheDefault) {
  // One-pass softmax with the row in registers serves cols=1000 but not cols=100000.
  const ktune::Config one_pass{"rowwise", {{"THREADS", 128}, {"ROWS", 1}, {"VEC", 8}, {"ONLINE", 0}}};
  const kt::Problem tuned_p = make_problem(key(OpKind::kSoftmax, 0, DType::kBF16, {4, 1000}));
  ASSERT_FALSE(kt::find_spec("softmax", "rowwise").rejection(tuned_p, one_pass));
  store_best("softmax", "rows=4,cols=1000", DType::kBF16, "", one_pass, "softmax.bf16.t128.r1.v8.on0");
  const cache::BestIndex idx = index();
  auto [c, info] =
      choose_plan(idx, MissPolicy::kNearest, device(), key(OpKind::kSoftmax, 0, DType::kBF16, {4, 100000}));
  EXPECT_EQ(info.source, PlanInfo::Source::kDefault);
  EXPECT_EQ(c.at("ONLINE"), 1);
  auto [c2, info2] =
      choose_plan(idx, MissPolicy::kNearest, device(), key(OpKind::kSoftmax, 0, DType::kBF16, {5, 999}));
  EXPECT_EQ(info2.source, PlanInfo::Source::kNearest);
  EXPECT_EQ(c2.at("ONLINE"), 0);
}

}  // namespace
}  // namespace ktune::runtime::detail
