// decode_attention's CPU float64 reference (kernel_templates/decode_attention/decode_attention_f64.hpp)
// against cases worked by hand (D4: a wrong reference must not be able to bless a wrong kernel).

#include <gtest/gtest.h>

#include <cmath>

#include "kernel_templates/decode_attention/decode_attention_f64.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

// One sequence, two query heads sharing one K/V head (G = 2), two keys, D = 2.
// k0 = [0, 0], k1 = [ln 3, ln 3 / 2]; v0 = [1, 2], v1 = [5, -2].
// head 0, q = [1, 0]: scores [0, ln 3], weights [1/4, 3/4], o = [4, -1].
// head 1, q = [0, 1]: scores [0, ln 3 / 2], weights [1, sqrt 3] / (1 + sqrt 3).
const double kLn3 = std::log(3.0);
const std::vector<double> kQ = {1, 0, 0, 1};
const std::vector<double> kK = {0, 0, kLn3, kLn3 / 2};
const std::vector<double> kV = {1, 2, 5, -2};
const DecodeAttentionShape kShape{1, 2, 1, 2, 2, 2};

TEST(DecodeAttentionF64, GroupedHeadsByHand) {
  const auto o = decode_attention_f64(kQ, kK, kV, {}, kShape, 1.0);
  ASSERT_EQ(o.size(), 4u);
  EXPECT_NEAR(o[0], 4.0, 1e-14);
  EXPECT_NEAR(o[1], -1.0, 1e-14);
  const double r3 = std::sqrt(3.0);
  EXPECT_NEAR(o[2], (1 + 5 * r3) / (1 + r3), 1e-14);
  EXPECT_NEAR(o[3], (2 - 2 * r3) / (1 + r3), 1e-14);
}

TEST(DecodeAttentionF64, ScaleMultipliesTheScores) {
  // q doubled and scale halved: the same scores.
  const std::vector<double> q2 = {2, 0, 0, 2};
  const auto a = decode_attention_f64(kQ, kK, kV, {}, kShape, 1.0);
  const auto b = decode_attention_f64(q2, kK, kV, {}, kShape, 0.5);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-14);
  // Scale 0: uniform weights, o = mean of v = [3, 0].
  const auto u = decode_attention_f64(kQ, kK, kV, {}, kShape, 0.0);
  EXPECT_NEAR(u[0], 3.0, 1e-14);
  EXPECT_NEAR(u[1], 0.0, 1e-14);
}

TEST(DecodeAttentionF64, ContextLengthsAndCacheStride) {
  // Length 1: only key 0 counts, o = v0 for both heads. Length 0 and negative: o = 0. A length past
  // seq is clamped to seq.
  auto o = decode_attention_f64(kQ, kK, kV, std::vector<int32_t>{1}, kShape, 1.0);
  EXPECT_EQ(o, (std::vector<double>{1, 2, 1, 2}));
  EXPECT_EQ(decode_attention_f64(kQ, kK, kV, std::vector<int32_t>{0}, kShape, 1.0),
            std::vector<double>(4, 0.0));
  EXPECT_EQ(decode_attention_f64(kQ, kK, kV, std::vector<int32_t>{-3}, kShape, 1.0),
            std::vector<double>(4, 0.0));
  EXPECT_NEAR(decode_attention_f64(kQ, kK, kV, std::vector<int32_t>{7}, kShape, 1.0)[0], 4.0, 1e-14);
  // seq 1 within a cache of 2 keys: key 1 is not read.
  const DecodeAttentionShape one{1, 2, 1, 1, 2, 2};
  EXPECT_EQ(decode_attention_f64(kQ, kK, kV, {}, one, 1.0), (std::vector<double>{1, 2, 1, 2}));
}

TEST(DecodeAttentionF64, EachGroupReadsItsOwnKvHead) {
  // Two K/V heads of one key each (seq 1): head h's output is v of its own group.
  const std::vector<double> k = {1, 1, 1, 1};
  const std::vector<double> v = {1, 2, 3, 4};
  const DecodeAttentionShape s{1, 2, 2, 1, 1, 2};
  EXPECT_EQ(decode_attention_f64(kQ, k, v, {}, s, 1.0), (std::vector<double>{1, 2, 3, 4}));
}

TEST(DecodeAttentionF64, RefusesInconsistentShapes) {
  EXPECT_THROW(decode_attention_f64(kQ, kK, kV, {}, {1, 3, 2, 2, 2, 2}, 1.0), Error);  // 3 % 2
  EXPECT_THROW(decode_attention_f64(kQ, kK, kV, {}, {1, 2, 1, 3, 2, 2}, 1.0), Error);  // seq > seq_max
  EXPECT_THROW(decode_attention_f64(kQ, kK, std::vector<double>{1}, {}, kShape, 1.0), Error);
  EXPECT_THROW(decode_attention_f64(kQ, kK, kV, std::vector<int32_t>{1, 1}, kShape, 1.0), Error);
}

}  // namespace
}  // namespace ktune::kernel_templates
