// BufferFill (core/buffer_fill.hpp): which fills can fill which buffers. Inputs are never all zeros
// (DESIGN D4), values must fit the element type, integer buffers are never filled at random.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "core/buffer_fill.hpp"

namespace ktune {
namespace {

#define EXPECT_REASON(fill, count, integer, part)               \
  do {                                                          \
    const auto why = (fill).invalid_reason((count), (integer)); \
    ASSERT_TRUE(why.has_value()) << (fill).describe();          \
    EXPECT_NE(why->find(part), std::string::npos) << *why;      \
  } while (0)

TEST(BufferFill, TheDefaultRandomFillServesFloatsOnly) {
  EXPECT_EQ(BufferFill{}.invalid_reason(1000, std::nullopt), std::nullopt);
  EXPECT_REASON(BufferFill{}, 1000, IntType::kI32, "random integers would index anywhere");
  EXPECT_REASON(BufferFill::random(0), 10, std::nullopt, "not a positive number");
}

TEST(BufferFill, ARangeThatCanOnlyGiveZerosIsRefused) {
  EXPECT_REASON(BufferFill::range(0, 0), 100, std::nullopt, "can only produce zeros");
  EXPECT_REASON(BufferFill::range(0, 0), 100, IntType::kI32, "can only produce zeros");
  EXPECT_EQ(BufferFill::range(-2, 3).invalid_reason(100, std::nullopt), std::nullopt);
  // An integer range is inclusive: [0, 1] holds a one; a float range needs min < max.
  EXPECT_EQ(BufferFill::range(0, 1).invalid_reason(100, IntType::kU8), std::nullopt);
  EXPECT_REASON(BufferFill::range(3, 3), 100, std::nullopt, "needs min < max");
  EXPECT_EQ(BufferFill::range(3, 3).invalid_reason(100, IntType::kI64), std::nullopt);
  EXPECT_REASON(BufferFill::range(5, 2), 100, IntType::kI32, "is empty");
}

TEST(BufferFill, IntegerValuesMustBeIntegersTheTypeHolds) {
  EXPECT_REASON(BufferFill::range(0.5, 3), 10, IntType::kI32, "integer bounds");
  EXPECT_REASON(BufferFill::range(0, 256), 10, IntType::kU8, "does not fit u8");
  EXPECT_REASON(BufferFill::range(-1, 3), 10, IntType::kU8, "does not fit u8");
  EXPECT_REASON(BufferFill::range(0, 3e9), 10, IntType::kI32, "does not fit i32");
  EXPECT_REASON(BufferFill::range(0, 9223372036854775808.0), 10, IntType::kI64, "does not fit i64");
  EXPECT_REASON(BufferFill::range(-1, 1e39), 10, std::nullopt, "exceeds f32");
  EXPECT_REASON(BufferFill::repeat({1, 1e40}), 10, std::nullopt, "not a finite f32");
  EXPECT_EQ(BufferFill::range(0, 3e9).invalid_reason(10, IntType::kI64), std::nullopt);
  EXPECT_REASON(BufferFill::repeat({1, 2.5}), 10, IntType::kI32, "2.5 is not an integer");
  EXPECT_REASON(BufferFill::repeat({1, 300}), 10, IntType::kU8, "does not fit u8");
}

TEST(BufferFill, APatternOfZerosIsRefusedEvenWhenOnlyItsHeadFits) {
  EXPECT_REASON(BufferFill::repeat({0, 0, 0}), 100, std::nullopt, "all zeros");
  EXPECT_EQ(BufferFill::repeat({0, 0, 1.5}).invalid_reason(100, std::nullopt), std::nullopt);
  // A two-element buffer holds only the pattern's first two values.
  EXPECT_REASON(BufferFill::repeat({0, 0, 1.5}), 2, std::nullopt, "first 2 values");
  EXPECT_REASON(BufferFill::repeat({}), 2, std::nullopt, "1 to 64 values");
  EXPECT_REASON(BufferFill::repeat(std::vector<double>(65, 1.0)), 100, std::nullopt, "1 to 64 values");
}

TEST(BufferFill, ASequenceFillsIntegersAndNeverOnlyZeros) {
  EXPECT_REASON(BufferFill::sequence(0, 1, 100), 10, std::nullopt, "fills an integer buffer");
  EXPECT_EQ(BufferFill::sequence(0, 1, 100).invalid_reason(1000, IntType::kI32), std::nullopt);
  // 0 + 0 i is zero; 7 + 7 i mod 7 is zero; one element of 0.
  // Into [0, 1) the one index 0 is all a buffer can hold (a table of one block): accepted.
  EXPECT_EQ(BufferFill::sequence(0, 1, 1).invalid_reason(1000, IntType::kI32), std::nullopt);
  EXPECT_REASON(BufferFill::sequence(0, 0, std::nullopt), 1000, IntType::kI32, "only produce zeros");
  EXPECT_REASON(BufferFill::sequence(7, 7, 7), 1000, IntType::kI64, "only produce zeros");
  EXPECT_REASON(BufferFill::sequence(0, 5, std::nullopt), 1, IntType::kI32, "only produce zeros");
  EXPECT_EQ(BufferFill::sequence(0, 5, std::nullopt).invalid_reason(2, IntType::kI32), std::nullopt);
  EXPECT_REASON(BufferFill::sequence(0, 1, 0), 10, IntType::kI32, "modulo 0 is not positive");
  // Values beyond the type: a u8 sequence mod 300 reaches 299; without modulo, the last value counts.
  EXPECT_REASON(BufferFill::sequence(0, 1, 300), 10, IntType::kU8, "does not fit u8");
  EXPECT_EQ(BufferFill::sequence(0, 1, 256).invalid_reason(10000, IntType::kU8), std::nullopt);
  EXPECT_REASON(BufferFill::sequence(0, 1, std::nullopt), 300, IntType::kU8, "does not fit u8");
  EXPECT_REASON(BufferFill::sequence(0, int64_t{1} << 40, std::nullopt), 1 << 23, IntType::kI64,
                "beyond +-2^62");
}

TEST(BufferFill, RandomNonZeroRangesAndPatternsAreAccepted) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-100, 100);
  for (int i = 0; i < 200; ++i) {
    const double a = u(rng);
    const double b = a + 0.5 + std::abs(u(rng));
    EXPECT_EQ(BufferFill::range(a, b).invalid_reason(1 + rng() % 1000, std::nullopt), std::nullopt)
        << a << " " << b;
    EXPECT_EQ(BufferFill::repeat({a, b}).invalid_reason(1 + rng() % 1000, std::nullopt), std::nullopt);
  }
}

TEST(BufferFill, DescribeNamesTheKindAndItsNumbers) {
  EXPECT_EQ(BufferFill::range(-2, 3).describe(), "range [-2, 3]");
  EXPECT_EQ(BufferFill::repeat({1, -0.5}).describe(), "pattern [1, -0.5]");
  EXPECT_EQ(BufferFill::sequence(0, 1, 512).describe(), "sequence 0 + 1 i mod 512");
  EXPECT_EQ(BufferFill::random(2).describe(), "random x2");
}

TEST(IntType, NamesSizesAndBoundsRoundTrip) {
  for (IntType t : {IntType::kI32, IntType::kI64, IntType::kU8}) {
    EXPECT_EQ(int_type_from_string(to_string(t)), t);
  }
  EXPECT_EQ(int_type_from_string("f32"), std::nullopt);
  EXPECT_EQ(size_of(IntType::kI32), 4u);
  EXPECT_EQ(size_of(IntType::kI64), 8u);
  EXPECT_EQ(size_of(IntType::kU8), 1u);
  EXPECT_EQ(max_value(IntType::kU8), 255);
  EXPECT_EQ(min_value(IntType::kI32), -2147483648.0);
}

}  // namespace
}  // namespace ktune
