// Every operator's binding (the entry point's tensor slots, its call-time scalars and where they sit
// in the launch arguments, its row-stride scalars, its default templates), pinned as literal values:
// the binding the dispatch runtime launches with must not change when the way it is described does.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "runtime/detail/op_binding.hpp"
#include "runtime/detail/plan_launcher.hpp"

namespace ktune::runtime::detail {
namespace {

namespace kt = kernel_templates;
using SK = ScalarBinding::Kind;
constexpr std::size_t kEvery = ScalarBinding::kEveryLaunch;
constexpr std::size_t kValue = ScalarBinding::kByValue;
constexpr double kAny = ScalarBinding::kAnyValue;

struct Pinned {
  OpKind op;
  std::string kernel;
  std::vector<std::string> dims;
  std::string default_variant;
  std::vector<std::string> slots;
  std::vector<ScalarBinding> scalars;
  std::vector<std::string> preferred_defaults;
  std::vector<RowStrideBinding> row_strides;
};

/// The table runtime/detail/op_binding.cpp held by hand before the bindings were derived from the
/// specs (commit fb659a3), with its constants written out.
std::vector<Pinned> pinned() {
  const double eps = static_cast<double>(1e-6f);
  return {
      {OpKind::kGemm,
       "gemm",
       {"m", "n", "k"},
       "tiled",
       {"a", "b", "c", "bias"},
       {},
       {"gemv", "mma"},
       {{"a", 0}, {"b", 1}, {"c", 2}}},
      {OpKind::kRmsNorm,
       "rmsnorm",
       {"rows", "hidden"},
       "rowwise",
       {"x", "residual", "w", "y", "residual_out"},
       {{kEvery, kValue, SK::kF32, eps, 0}},
       {},
       {}},
      {OpKind::kRmsNormRope,
       "rmsnorm_rope",
       {"tokens", "heads_q", "heads_kv", "head_dim"},
       "headwise",
       {"q", "k", "q_weight", "k_weight", "cos_sin", "positions", "q_out", "k_out"},
       {{kEvery, 11, SK::kI32, 4096, 0}, {kEvery, kValue, SK::kF32, eps, 1}},
       {},
       {}},
      {OpKind::kSoftmax,
       "softmax",
       {"rows", "cols"},
       "rowwise",
       {"x", "y", "lengths"},
       {{kEvery, kValue, SK::kF32, 0.75, 0}},
       {},
       {}},
      {OpKind::kSwiglu, "swiglu", {"m", "i"}, "elementwise", {"x", "gate", "up", "out"}, {}, {}, {}},
      {OpKind::kDecodeAttention,
       "decode_attention",
       {"batch", "heads_q", "heads_kv", "seq", "head_dim"},
       "splitkv",
       {"q", "k", "v", "o", "context_lens", "block_table"},
       {{kEvery, kValue, SK::kF32, static_cast<double>(0.318309886f), 0},
        {kEvery, 13, SK::kI32, kAny, 1},
        {kEvery, 14, SK::kI32, kAny, 2},
        {kEvery, 15, SK::kI32, kAny, 3}},
       {},
       {}},
      {OpKind::kFp8Gemm,
       "fp8_gemm",
       {"m", "n", "k"},
       "mma",
       {"a", "b", "a_scale", "b_scale", "c"},
       {},
       {},
       {}},
      {OpKind::kRopeAppend,
       "rope_append",
       {"tokens", "heads_q", "heads_kv", "head_dim", "rot_dim"},
       "headwise",
       {"q", "k", "v", "q_weight", "k_weight", "cos_sin", "positions", "block_table", "q_out", "k_cache",
        "v_cache"},
       {{kEvery, 14, SK::kI32, 1, 0},
        {kEvery, 15, SK::kI32, 1, 1},
        {kEvery, 16, SK::kI32, 1, 2},
        {kEvery, 17, SK::kI32, 2147483647, 3},
        {kEvery, 18, SK::kI32, 4096, 4},
        {kEvery, kValue, SK::kF32, eps, 5}},
       {},
       {}},
  };
}

void expect_same(const ScalarBinding& got, const ScalarBinding& want, const std::string& where) {
  EXPECT_EQ(got.launch, want.launch) << where;
  EXPECT_EQ(got.arg, want.arg) << where;
  EXPECT_EQ(got.kind, want.kind) << where;
  if (std::isnan(want.spec_value)) {
    EXPECT_TRUE(std::isnan(got.spec_value)) << where << ": spec_value " << got.spec_value << ", not any";
  } else {
    EXPECT_EQ(got.spec_value, want.spec_value) << where;
  }
  EXPECT_EQ(got.index, want.index) << where;
}

TEST(OpBinding, EveryOperatorsBindingIsTheOneItsHandWrittenTableSaid) {
  const std::vector<Pinned> want = pinned();
  ASSERT_EQ(want.size(), std::size(kAllOps));
  for (const Pinned& w : want) {
    const OpBinding& b = binding_of(w.op);
    EXPECT_EQ(b.op, w.op) << w.kernel;
    EXPECT_EQ(b.kernel, w.kernel);
    EXPECT_EQ(b.dims, w.dims) << w.kernel;
    EXPECT_EQ(b.default_variant, w.default_variant) << w.kernel;
    EXPECT_EQ(b.slots, w.slots) << w.kernel;
    EXPECT_EQ(b.preferred_defaults, w.preferred_defaults) << w.kernel;
    ASSERT_EQ(b.scalars.size(), w.scalars.size()) << w.kernel;
    for (std::size_t i = 0; i < w.scalars.size(); ++i)
      expect_same(b.scalars[i], w.scalars[i], w.kernel + " scalar " + std::to_string(i));
    ASSERT_EQ(b.row_strides.size(), w.row_strides.size()) << w.kernel;
    for (std::size_t i = 0; i < w.row_strides.size(); ++i) {
      EXPECT_EQ(b.row_strides[i].tensor, w.row_strides[i].tensor) << w.kernel;
      EXPECT_EQ(b.row_strides[i].index, w.row_strides[i].index) << w.kernel;
    }
  }
}

// A family whose binding names a scalar its signature lacks (a kernel parameter renamed or dropped)
// is refused when its binding is derived, naming the family, the scalar and the signature.
TEST(OpBinding, AScalarNamedOutsideTheSignatureIsRefusedByName) {
  constexpr std::string_view slots[] = {"q", "k"};
  constexpr std::string_view signature[] = {"q", "k", "tokens", "max_position", "eps"};
  constexpr kt::CallScalar scalars[] = {
      {.name = "max_pos", .kind = kt::CallScalar::Kind::kI32, .spec_value = 4096},
      {.name = "eps", .kind = kt::CallScalar::Kind::kF32, .spec_value = 1e-6, .by_value = true}};
  kt::FamilyInfo family{"rmsnorm_rope", "", "neox", {}, {}};
  family.dispatch = {
      .default_variant = "headwise", .slots = slots, .signature = signature, .scalars = scalars};
  try {
    derive_binding(OpKind::kRmsNormRope, family);
    ADD_FAILURE() << "a scalar the signature lacks must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    const std::string what = e.what();
    for (const char* part : {"rmsnorm_rope", "'max_pos'", "signature", "max_position"})
      EXPECT_NE(what.find(part), std::string::npos) << part << " in: " << what;
  }
  // A name the signature holds twice is no position either; one it holds once is found there.
  constexpr std::string_view twice[] = {"q", "max_pos", "k", "max_pos"};
  family.dispatch.signature = twice;
  EXPECT_THROW(derive_binding(OpKind::kRmsNormRope, family), Error);
  constexpr std::string_view once[] = {"q", "k", "tokens", "max_pos", "eps"};
  family.dispatch.signature = once;
  const OpBinding b = derive_binding(OpKind::kRmsNormRope, family);
  ASSERT_EQ(b.scalars.size(), 2u);
  EXPECT_EQ(b.scalars[0].arg, 3u);
  EXPECT_EQ(b.scalars[1].arg, ScalarBinding::kByValue);
  EXPECT_EQ(b.scalars[1].index, 1u);
}

}  // namespace
}  // namespace ktune::runtime::detail
