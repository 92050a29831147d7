// The CPU float64 references of the operators (kernel_templates/reference_ops.hpp) against cases
// worked by hand (D4: a wrong reference must not be able to bless a wrong kernel).

#include <gtest/gtest.h>

#include <cmath>

#include "kernel_templates/reference_ops.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

TEST(ReferenceOps, RoundToDtypeIsNearestEven) {
  EXPECT_EQ(round_to_dtype(1.0 + std::ldexp(1.0, -8), DType::kBF16), 1.0);  // tie -> even
  EXPECT_EQ(round_to_dtype(1.0 + 3 * std::ldexp(1.0, -8), DType::kBF16), 1.0 + std::ldexp(1.0, -6));
  EXPECT_EQ(round_to_dtype(1.0 + std::ldexp(1.0, -11), DType::kF16), 1.0);
  EXPECT_EQ(round_to_dtype(1.0 + 3 * std::ldexp(1.0, -11), DType::kF16), 1.0 + std::ldexp(1.0, -9));
  EXPECT_EQ(round_to_dtype(1.0 + std::ldexp(1.0, -24), DType::kF32), 1.0);
  EXPECT_EQ(round_to_dtype(-0.3, DType::kF32), static_cast<double>(-0.3f));
  EXPECT_EQ(round_to_dtype(std::ldexp(1.0, -20), DType::kF16), std::ldexp(1.0, -20));  // subnormal, exact
  EXPECT_THROW(round_to_dtype(1.0, DType::kFP8E4M3), Error);
}

TEST(ReferenceOps, RmsNormByHand) {
  // x = [3, 4]: mean square 12.5, rms 3.5355...; w = [1, 2].
  const auto r =
      rmsnorm_f64(std::vector<double>{3, 4}, {}, std::vector<double>{1, 2}, 1, 2, 0.0, DType::kF32);
  EXPECT_NEAR(r.y[0], 3 / std::sqrt(12.5), 1e-15);
  EXPECT_NEAR(r.y[1], 8 / std::sqrt(12.5), 1e-15);
  EXPECT_NEAR(r.y[0], 0.848528137423857, 1e-12);
  EXPECT_TRUE(r.residual_out.empty());
  // eps enters under the root: x = [1, 1], eps = 3 -> 1 / sqrt(4) = 0.5.
  const auto e =
      rmsnorm_f64(std::vector<double>{1, 1}, {}, std::vector<double>{1, 1}, 1, 2, 3.0, DType::kF32);
  EXPECT_DOUBLE_EQ(e.y[1], 0.5);
}

TEST(ReferenceOps, RmsNormResidualSumIsRoundedToTheDtype) {
  // Two rows. Row 0: 1 + 0 and 2^-8 + 1 -> bf16 [1, 1] (the tie rounds to even): mean square 1,
  // y = w. Row 1: [1 + 2, 2 + 2] = [3, 4].
  const std::vector<double> x = {1, std::ldexp(1.0, -8), 1, 2};
  const std::vector<double> res = {0, 1, 2, 2};
  const auto r = rmsnorm_f64(x, res, std::vector<double>{1, 2}, 2, 2, 0.0, DType::kBF16);
  EXPECT_EQ(r.residual_out, (std::vector<double>{1, 1, 3, 4}));
  EXPECT_DOUBLE_EQ(r.y[0], 1.0);
  EXPECT_DOUBLE_EQ(r.y[1], 2.0);
  EXPECT_NEAR(r.y[3], 8 / std::sqrt(12.5), 1e-15);
  // In f32 the sum 1 + 2^-8 is exact: no longer equal.
  EXPECT_NE(rmsnorm_f64(x, res, std::vector<double>{1, 2}, 2, 2, 0.0, DType::kF32).residual_out[1], 1.0);
  EXPECT_THROW(rmsnorm_f64(x, res, std::vector<double>{1}, 2, 2, 0.0, DType::kF32), Error);
}

TEST(ReferenceOps, RopeNeoxAndGptjByHand) {
  // One token, one head, D = 4, x = [1, 2, 3, 4]: mean square 7.5. Table row 0: angle 0 is 90
  // degrees (cos 0, sin 1), angle 1 is 0 (cos 1, sin 0).
  const std::vector<double> x = {1, 2, 3, 4};
  const std::vector<double> w = {1, 1, 1, 1};
  const std::vector<double> table = {0, 1, 1, 0};
  const std::vector<int32_t> pos = {0};
  const double inv = 1 / std::sqrt(7.5);
  // NeoX pairs (0, 2) at angle 0 and (1, 3) at angle 1: [-x2, x1, x0, x3].
  const auto neox = rmsnorm_rope_f64(x, w, table, pos, 1, 1, 4, 1, RopeStyle::kNeox, 0.0);
  const std::vector<double> want_neox = {-3 * inv, 2 * inv, 1 * inv, 4 * inv};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(neox[i], want_neox[i], 1e-15) << i;
  // GPT-J pairs (0, 1) at angle 0 and (2, 3) at angle 1: [-x1, x0, x2, x3].
  const auto gptj = rmsnorm_rope_f64(x, w, table, pos, 1, 1, 4, 1, RopeStyle::kGptj, 0.0);
  const std::vector<double> want_gptj = {-2 * inv, 1 * inv, 3 * inv, 4 * inv};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(gptj[i], want_gptj[i], 1e-15) << i;
}

TEST(ReferenceOps, RopePositionsWrapAndWeightsApply) {
  // max_pos 2: row 0 the identity rotation, row 1 a half turn (cos -1, sin 0). Position 3 -> 1,
  // -1 (0xFFFFFFFF) -> 1, 4 -> 0. Weight w scales before the rotation.
  const std::vector<double> table = {1, 1, 0, 0, -1, -1, 0, 0};
  const std::vector<double> x = {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4};
  const std::vector<double> w = {2, 2, 2, 2};
  const std::vector<int32_t> pos = {3, -1, 4};
  const auto out = rmsnorm_rope_f64(x, w, table, pos, 3, 1, 4, 2, RopeStyle::kNeox, 0.0);
  const double inv2 = 2 / std::sqrt(7.5);
  EXPECT_NEAR(out[0], -1 * inv2, 1e-15);
  EXPECT_NEAR(out[7], -4 * inv2, 1e-15);
  EXPECT_NEAR(out[8], 1 * inv2, 1e-15);
  EXPECT_NEAR(out[11], 4 * inv2, 1e-15);
  EXPECT_THROW(rmsnorm_rope_f64(std::vector<double>(3), std::vector<double>(3), std::vector<double>(3), pos,
                                1, 1, 3, 1, RopeStyle::kNeox, 0.0),
               Error);
}

TEST(ReferenceOps, RopeTable) {
  const auto t = rope_table_f64(2, 4, 100.0);
  EXPECT_EQ(t.size(), 8u);
  EXPECT_DOUBLE_EQ(t[0], 1.0);  // p = 0
  EXPECT_DOUBLE_EQ(t[2], 0.0);
  EXPECT_NEAR(t[4], std::cos(1.0), 1e-15);  // p = 1, j = 0: angle 1
  EXPECT_NEAR(t[5], std::cos(0.1), 1e-15);  // j = 1: 100^(-1/2)
  EXPECT_NEAR(t[6], std::sin(1.0), 1e-15);
  EXPECT_NEAR(t[7], std::sin(0.1), 1e-15);
}

TEST(ReferenceOps, SoftmaxByHand) {
  const double l2 = std::log(2.0);
  const std::vector<double> x = {0, l2, 2 * l2, 0, l2, 2 * l2};
  const auto y = softmax_f64(x, 2, 3, 1.0, SoftmaxMask::kNone, 0, {});
  EXPECT_NEAR(y[0], 1.0 / 7, 1e-15);
  EXPECT_NEAR(y[2], 4.0 / 7, 1e-15);
  // Scale 0.5 halves the exponents: weights 1, sqrt 2, 2.
  const auto h = softmax_f64(x, 2, 3, 0.5, SoftmaxMask::kNone, 0, {});
  EXPECT_NEAR(h[1], std::sqrt(2.0) / (3 + std::sqrt(2.0)), 1e-15);
  // Causal, row_offset 1: row 0 sees columns 0..1, row 1 all three.
  const auto c = softmax_f64(x, 2, 3, 1.0, SoftmaxMask::kCausal, 1, {});
  EXPECT_NEAR(c[0], 1.0 / 3, 1e-15);
  EXPECT_NEAR(c[1], 2.0 / 3, 1e-15);
  EXPECT_EQ(c[2], 0.0);
  EXPECT_NEAR(c[5], 4.0 / 7, 1e-15);
  // Padding: lengths 1 and 4 (4 mod (3 + 1) = 0: an empty row of zeros).
  const std::vector<int32_t> lengths = {1, 4};
  const auto p = softmax_f64(x, 2, 3, 1.0, SoftmaxMask::kPadding, 0, lengths);
  EXPECT_EQ(p, (std::vector<double>{1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(softmax_valid_columns(SoftmaxMask::kPadding, 0, 3, 0, std::vector<int32_t>{-1}),
            3);  // 2^32-1 mod 4
  EXPECT_EQ(softmax_valid_columns(SoftmaxMask::kCausal, 5, 3, 0, {}), 3);
}

TEST(ReferenceOps, SoftmaxIsStableForLargeInputs) {
  const auto y = softmax_f64(std::vector<double>{1000, 1000}, 1, 2, 1.0, SoftmaxMask::kNone, 0, {});
  EXPECT_DOUBLE_EQ(y[0], 0.5);
}

TEST(ReferenceOps, SwigluByHand) {
  const double l3 = std::log(3.0);
  const auto out = swiglu_f64(std::vector<double>{0, l3, -l3}, std::vector<double>{5, 2, 4});
  EXPECT_EQ(out[0], 0.0);
  EXPECT_NEAR(out[1], 1.5 * l3, 1e-15);  // silu(ln 3) = ln 3 * 3/4
  EXPECT_NEAR(out[2], -l3, 1e-15);       // silu(-ln 3) = -ln 3 / 4
  std::vector<double> gate, up;
  split_gate_up(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, gate, up);
  EXPECT_EQ(gate, (std::vector<double>{1, 2, 5, 6}));
  EXPECT_EQ(up, (std::vector<double>{3, 4, 7, 8}));
}

}  // namespace
}  // namespace ktune::kernel_templates
