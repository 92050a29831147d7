// Verification math on cases worked by hand, and the tolerance table.
#include "measure/verification.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "ktune/error.hpp"

namespace ktune::measure {
namespace {

TEST(Verification, HandWorkedRelativeAndMaxAbsError) {
  // out - ref = {0, 0, -1}: ||diff|| = 1, ||ref|| = sqrt(1 + 4 + 16) = sqrt(21).
  const std::vector<double> out{1, 2, 3};
  const std::vector<double> ref{1, 2, 4};
  const ErrorMetrics m = compare(out, ref);
  EXPECT_NEAR(m.rel_err, 1 / std::sqrt(21.0), 1e-15);
  EXPECT_DOUBLE_EQ(m.max_abs_err, 1);
  EXPECT_DOUBLE_EQ(m.max_abs_ref, 4);
  EXPECT_EQ(m.count, 3U);
}

TEST(Verification, SecondHandWorkedCaseWithNegatives) {
  // diff = {0.5, -0.5, 0, 0}: ||diff|| = sqrt(0.5); ref {-3, 4, 0.5, -0.5}: ||ref|| = sqrt(25.5).
  const std::vector<double> out{-2.5, 3.5, 0.5, -0.5};
  const std::vector<double> ref{-3, 4, 0.5, -0.5};
  const ErrorMetrics m = compare(out, ref);
  EXPECT_NEAR(m.rel_err, std::sqrt(0.5 / 25.5), 1e-15);
  EXPECT_DOUBLE_EQ(m.max_abs_err, 0.5);
}

TEST(Verification, PartialSumsMergeLikeOnePass) {
  const std::vector<double> out{1.5, -2, 3, 4.25, 9};
  const std::vector<double> ref{1, -2.5, 3, 4, 8};
  ErrorSums a, b, whole;
  for (std::size_t i = 0; i < out.size(); ++i) {
    (i < 2 ? a : b).add(out[i], ref[i]);
    whole.add(out[i], ref[i]);
  }
  a.merge(b);
  EXPECT_DOUBLE_EQ(finish(a).rel_err, finish(whole).rel_err);
  EXPECT_DOUBLE_EQ(finish(a).max_abs_err, 1.0);
  EXPECT_EQ(finish(a).count, 5U);
}

TEST(Verification, ExactMatchPasses) {
  const std::vector<double> v{0.3, -0.7, 0.9};
  const Verdict verdict = judge(compare(v, v), tolerance_for(DType::kF32));
  EXPECT_TRUE(verdict.ok) << verdict.reason;
  EXPECT_EQ(verdict.metrics.rel_err, 0);
}

TEST(Verification, PoisonLeftInOutputFails) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> out{0.5, nan, 0.25};
  const std::vector<double> ref{0.5, 0.75, 0.25};
  const Verdict v = judge(compare(out, ref), tolerance_for(DType::kBF16));
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.reason.find("NaN/Inf"), std::string::npos) << v.reason;
}

TEST(Verification, BrokenReferenceFails) {
  const std::vector<double> out{1, 1};
  const std::vector<double> ref{1, std::numeric_limits<double>::infinity()};
  const Verdict v = judge(compare(out, ref), tolerance_for(DType::kF32));
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.reason.find("reference"), std::string::npos);
}

TEST(Verification, RelativeErrorJustOverAndUnderTheBound) {
  const Tolerance& t = tolerance_for(DType::kF16);  // rel_l2 = 2e-3
  // Uniform relative error e on every element gives rel_err = e exactly.
  std::vector<double> ref, under, over;
  for (int i = 1; i <= 100; ++i) {
    const double r = (i % 2 ? 1 : -1) * (0.25 + 0.0075 * i);
    ref.push_back(r);
    under.push_back(r * (1 + 0.9 * t.rel_l2));
    over.push_back(r * (1 + 1.1 * t.rel_l2));
  }
  EXPECT_TRUE(judge(compare(under, ref), t).ok);
  const Verdict v = judge(compare(over, ref), t);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.reason.find("relative error"), std::string::npos) << v.reason;
}

TEST(Verification, OneBadElementInALargeOutputIsCaughtByMaxAbs) {
  // 10^5 exact elements and one off by 0.5: rel_err = 0.5/||ref|| ~ 2.7e-3 < bf16's 1.6e-2, but
  // max abs 0.5 > 6.25e-2 * 1.
  std::vector<double> ref(100000), out;
  for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = (i % 3 ? 0.5 : -1.0);
  out = ref;
  out[777] += 0.5;
  const Verdict v = judge(compare(out, ref), tolerance_for(DType::kBF16));
  EXPECT_LT(v.metrics.rel_err, tolerance_for(DType::kBF16).rel_l2);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.reason.find("max abs error"), std::string::npos) << v.reason;
}

TEST(Verification, ZeroReferenceCases) {
  const std::vector<double> zero{0, 0};
  const std::vector<double> one{0, 1};
  EXPECT_EQ(compare(zero, zero).rel_err, 0);
  EXPECT_TRUE(std::isinf(compare(one, zero).rel_err));
  EXPECT_FALSE(judge(compare(std::vector<double>{}, std::vector<double>{}), tolerance_for(DType::kF32)).ok);
}

TEST(Verification, AllZeroReferenceFailsEvenWhenOutputMatches) {
  const std::vector<double> zero(8, 0.0);
  const Verdict v = judge(compare(zero, zero), tolerance_for(DType::kF32));
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.reason.find("all zeros"), std::string::npos) << v.reason;
}

TEST(Verification, LengthMismatchIsBadInput) {
  EXPECT_THROW(compare(std::vector<double>{1, 2}, std::vector<double>{1}), Error);
}

/// Softmax-like outputs ~4e-6 (below f16's smallest normal 2^-14 = 6.1e-5): pseudo-random
/// references in [3.5e-6, 4.5e-6), never zero.
std::vector<double> tiny_reference() {
  std::vector<double> ref;
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 4096; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;  // LCG (Knuth MMIX constants)
    ref.push_back(3.5e-6 + 1e-6 * static_cast<double>(x >> 11) * 0x1p-53);
  }
  return ref;
}

/// Rounds to the nearest multiple of `step` (f16's subnormal grid for step = 2^-24).
std::vector<double> round_to_grid(const std::vector<double>& v, double step) {
  std::vector<double> out;
  for (double x : v) out.push_back(std::nearbyint(x / step) * step);
  return out;
}

constexpr double kF16Subnormal = 0x1p-24;  // f16 bit pattern 0x0001

TEST(Verification, F16SubnormalOutputsRoundedCorrectlyPass) {
  const std::vector<double> ref = tiny_reference();
  std::vector<double> out = round_to_grid(ref, kF16Subnormal);
  const Tolerance& t = tolerance_for(DType::kF16);
  const Verdict v = judge(compare(out, ref), t);
  EXPECT_TRUE(v.ok) << v.reason;
  // The relative bounds alone would reject it: half a step of 6e-8 is ~0.7% of 4e-6.
  EXPECT_GT(v.metrics.rel_err, t.rel_l2);
  EXPECT_LE(v.metrics.max_abs_err, kF16Subnormal / 2);
  // A value a hair past a rounding midpoint, rounded to the other neighbour, still passes.
  out[10] = ref[10] - std::fmod(ref[10], kF16Subnormal);  // round down
  out[11] = out[10] + kF16Subnormal;                      // round up
  std::vector<double> near_mid = ref;
  near_mid[10] = out[10] + kF16Subnormal * 0.51;  // nearest is out[11]; out[10] is 0.51 steps off
  near_mid[11] = out[11] - kF16Subnormal * 0.51;  // nearest is out[10]; out[11] is 0.51 steps off
  std::vector<double> other = round_to_grid(near_mid, kF16Subnormal);
  other[10] = out[10];
  other[11] = out[11];
  const Verdict w = judge(compare(other, near_mid), t);
  EXPECT_TRUE(w.ok) << w.reason;
  EXPECT_NEAR(w.metrics.max_abs_err, 0.51 * kF16Subnormal, 1e-3 * kF16Subnormal);
}

TEST(Verification, F16SubnormalOutputTwoStepsOffFails) {
  const std::vector<double> ref = tiny_reference();
  std::vector<double> out = round_to_grid(ref, kF16Subnormal);
  out[1234] += 2 * kF16Subnormal;  // error in [1.5, 2.5] steps > the 1-step floor
  const Verdict v = judge(compare(out, ref), tolerance_for(DType::kF16));
  EXPECT_FALSE(v.ok);
  EXPECT_GE(v.metrics.max_abs_err, 1.5 * kF16Subnormal);
  EXPECT_NE(v.reason.find("abs floor"), std::string::npos) << v.reason;
}

TEST(Verification, F32HasNoAbsoluteFloor) {
  // The same f16-grid rounding judged as an f32 output: 0.4% relative error is far over f32's
  // bounds, and no floor rescues it.
  const std::vector<double> ref = tiny_reference();
  const Verdict v = judge(compare(round_to_grid(ref, kF16Subnormal), ref), tolerance_for(DType::kF32));
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(tolerance_for(DType::kF32).abs_floor, 0);
  // And an f32-accurate output of the same tiny values still passes on its relative bounds.
  std::vector<double> close;
  for (double r : ref) close.push_back(r * (1 + 0x1p-24));
  const Verdict w = judge(compare(close, ref), tolerance_for(DType::kF32));
  EXPECT_TRUE(w.ok) << w.reason;
}

// A user kernel's absolute bounds (docs/byo.md): alone they are the whole criterion, beside a
// relative bound either passes; integer outputs are compared exactly by default.
TEST(Verification, AnAbsoluteBoundAloneJudgesMaxAbsErrorOnly) {
  // ref ~1e-6 (an output near zero): relative error 0.5, abs error 1e-6.
  const std::vector<double> ref{1e-6, -2e-6, 1.5e-6};
  const std::vector<double> out{1.5e-6, -1e-6, 1.5e-6};
  const ErrorMetrics m = compare(out, ref);
  EXPECT_FALSE(judge(m, DType::kF32, 0, std::nullopt).ok);  // f32's relative bound: far off
  EXPECT_TRUE(judge(m, DType::kF32, 0, 1e-5).ok);
  const Verdict tight = judge(m, DType::kF32, 0, 5e-7);
  EXPECT_FALSE(tight.ok);
  EXPECT_NE(tight.reason.find("> absolute bound 5e-07"), std::string::npos) << tight.reason;
}

TEST(Verification, RelativeAndAbsoluteBoundsTogetherPassWhenEitherHolds) {
  // diff {0.1, 0, 0}: rel = 0.1 / sqrt(1 + 4 + 9) = 0.0267, max abs 0.1.
  const ErrorMetrics m = compare(std::vector<double>{1.1, 2, 3}, std::vector<double>{1, 2, 3});
  EXPECT_TRUE(judge(m, DType::kF32, 3e-2, 1e-3).ok);   // rel holds
  EXPECT_TRUE(judge(m, DType::kF32, 1e-3, 0.2).ok);    // abs holds
  EXPECT_FALSE(judge(m, DType::kF32, 1e-3, 1e-3).ok);  // neither
  EXPECT_FALSE(judge(m, DType::kF32, 1e-3, std::nullopt).ok);
}

TEST(Verification, IntegerOutputsAreComparedExactly) {
  const std::vector<double> ref{3, 0, 17, 4};
  EXPECT_TRUE(judge_absolute(compare(ref, ref), 0, "i32").ok);
  const Verdict off = judge_absolute(compare(std::vector<double>{3, 0, 18, 4}, ref), 0, "i32");
  EXPECT_FALSE(off.ok);
  EXPECT_NE(off.reason.find("i32 outputs differ (compared exactly)"), std::string::npos) << off.reason;
  EXPECT_TRUE(judge_absolute(compare(std::vector<double>{3, 0, 18, 4}, ref), 1, "i32").ok);
  // The same guards as the relative judgement: an all-zero reference proves nothing.
  const std::vector<double> zeros(4, 0.0);
  EXPECT_FALSE(judge_absolute(compare(zeros, zeros), 0, "i32").ok);
}

TEST(ToleranceTable, AbsoluteFloorIsOneSubnormalStepOfTheFormat) {
  // Independent of tolerance.cpp: the value of the smallest subnormal bit pattern of each format.
  EXPECT_EQ(tolerance_for(DType::kF16).abs_floor, decode_f16(0x0001));
  EXPECT_EQ(tolerance_for(DType::kBF16).abs_floor, decode_bf16(0x0001));
  EXPECT_EQ(tolerance_for(DType::kFP8E4M3).abs_floor, decode_fp8e4m3(0x01));
  EXPECT_EQ(tolerance_for(DType::kFP8E5M2).abs_floor, decode_fp8e5m2(0x01));
  EXPECT_EQ(tolerance_for(DType::kF16).abs_floor, 0x1p-24);
}

TEST(ToleranceTable, OneRowPerDtypeWithAReason) {
  std::set<DType> seen;
  for (const Tolerance& t : tolerance_table()) {
    EXPECT_TRUE(seen.insert(t.dtype).second) << "duplicate row for " << to_string(t.dtype);
    EXPECT_FALSE(t.reason.empty());
    EXPECT_GT(t.rel_l2, 0);
    EXPECT_GE(t.max_abs_rel, t.rel_l2);
    EXPECT_EQ(tolerance_for(t.dtype).dtype, t.dtype);
  }
  EXPECT_EQ(seen.size(), 5U);
}

TEST(ToleranceTable, CoarserTypesAreLooser) {
  EXPECT_LT(tolerance_for(DType::kF32).rel_l2, tolerance_for(DType::kF16).rel_l2);
  EXPECT_LT(tolerance_for(DType::kF16).rel_l2, tolerance_for(DType::kBF16).rel_l2);
  EXPECT_LT(tolerance_for(DType::kBF16).rel_l2, tolerance_for(DType::kFP8E4M3).rel_l2);
  EXPECT_LT(tolerance_for(DType::kFP8E4M3).rel_l2, tolerance_for(DType::kFP8E5M2).rel_l2);
  // Each bound is above the output-rounding RMS error u/sqrt(3) of its type.
  EXPECT_GT(tolerance_for(DType::kBF16).rel_l2, std::ldexp(1.0, -8) / std::sqrt(3.0));
  EXPECT_GT(tolerance_for(DType::kF16).rel_l2, std::ldexp(1.0, -11) / std::sqrt(3.0));
}

}  // namespace
}  // namespace ktune::measure
