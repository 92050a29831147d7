// The expression evaluator of config spaces and user kernel descriptions: values against results
// worked by hand, and the errors (unknown name, a name used before it is visible, bad syntax).

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/expression_evaluator.hpp"

namespace ktune {
namespace {

TEST(ExpressionEvaluator, EvaluatesOperatorsAndFunctionsWithBoundSlots) {
  ExpressionEvaluator ev({"rows", "cols", "TILE"});
  const size_t grid = ev.add("ceil_div(cols, TILE)");
  const size_t rem = ev.add("rows % TILE");
  const size_t pow2 = ev.add("is_pow2(TILE) && TILE <= 64");
  const size_t fl = ev.add("floor(rows / TILE) + ceil(cols / TILE)");
  ev.set(0, 1000);
  ev.set(1, 4097);
  ev.set(2, 32);
  EXPECT_EQ(ev.eval(grid), 129);  // 4097 / 32 = 128.03 -> 129
  EXPECT_EQ(ev.eval(rem), 8);     // 1000 = 31 * 32 + 8
  EXPECT_EQ(ev.eval(pow2), 1);
  EXPECT_EQ(ev.eval(fl), 31 + 129);
  ev.set(2, 48);
  EXPECT_EQ(ev.eval(pow2), 0);
  EXPECT_EQ(ev.eval(grid), 86);  // 4097 / 48 = 85.35 -> 86
}

TEST(ExpressionEvaluator, MatchesDirectArithmeticOnRandomValues) {
  ExpressionEvaluator ev({"a", "b"});
  const size_t e = ev.add("a * b + ceil_div(a, b) - max(a, b)");
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> dist(1, 100000);
  for (int i = 0; i < 200; ++i) {
    const double a = dist(rng);
    const double b = dist(rng);
    ev.set(0, a);
    ev.set(1, b);
    EXPECT_DOUBLE_EQ(ev.eval(e), a * b + std::ceil(a / b) - std::max(a, b)) << a << " " << b;
  }
}

TEST(ExpressionEvaluator, NamesTheUnknownSymbol) {
  ExpressionEvaluator ev({"rows"});
  try {
    ev.add("rows * colz");
    FAIL() << "an unknown name was accepted";
  } catch (const ExpressionError& e) {
    EXPECT_EQ(e.bad_part(), "colz");
    EXPECT_NE(std::string(e.what()).find("unknown parameter 'colz'"), std::string::npos) << e.what();
  }
}

TEST(ExpressionEvaluator, RefusesASlotUsedBeforeItIsVisible) {
  ExpressionEvaluator ev({"a", "b"});
  EXPECT_THROW(ev.add("a + b", 1), ExpressionError);
  EXPECT_NO_THROW(ev.add("a + 1", 1));
}

TEST(ExpressionEvaluator, RefusesBadSyntax) {
  ExpressionEvaluator ev({"a"});
  EXPECT_THROW(ev.add("a * (2 +"), ExpressionError);
  EXPECT_EQ(ev.slot_of("a"), 0u);
  EXPECT_EQ(ev.slot_of("zz"), 1u);
}

}  // namespace
}  // namespace ktune
