#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "cache_test_util.hpp"
#include "core/shape.hpp"
#include "ktune/error.hpp"

namespace ktune::cache {
namespace {

using testing::Rng;

/// Expects Shape::parse(text) to throw kBadInput whose message contains `needle`.
void expect_bad(const std::string& text, const std::string& needle) {
  try {
    (void)Shape::parse(text);
    ADD_FAILURE() << "parse('" << text << "') did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << text;
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message '" << e.what() << "' lacks '" << needle << "'";
  }
}

TEST(Shape, ParsesRandomShapesAndRoundTrips) {
  Rng r;
  SCOPED_TRACE(r.seed());
  for (int i = 0; i < 200; ++i) {
    const int n = static_cast<int>(r.uniform(1, 5));
    std::vector<std::pair<std::string, int64_t>> want;
    std::string text;
    for (int d = 0; d < n; ++d) {
      std::string name = r.word(1) + std::to_string(d);
      const int64_t v = r.uniform(1, 2147483647);
      want.emplace_back(name, v);
      text += (d ? "," : "") + name + "=" + std::to_string(v);
    }
    const Shape s = Shape::parse(text);
    ASSERT_EQ(s.dims(), want) << text;
    EXPECT_EQ(s.canonical(), text);
    EXPECT_EQ(Shape::parse(s.canonical()), s);
    for (const auto& [name, v] : want) EXPECT_EQ(s.at(name), v);
  }
}

TEST(Shape, AcceptsSpacesAroundParts) {
  const Shape s = Shape::parse(" m = 16 , n=4096,k= 7 ");
  EXPECT_EQ(s.canonical(), "m=16,n=4096,k=7");
}

TEST(Shape, ErrorsNameTheBadPart) {
  expect_bad("m=-1,n=4,k=4", "m=-1");
  expect_bad("m=abc,n=4", "m=abc");
  expect_bad("m=2147483648", "m=2147483648");
  expect_bad("m=99999999999999999999999", "m=99999999999999999999999");
  expect_bad("m=0", "m=0");
  expect_bad("m=16,n", "'n'");
  expect_bad("m=16,,n=3", "empty dimension");
  expect_bad("m=1,m=2", "'m' is given twice");
  expect_bad("M=4", "'M'");
  expect_bad("m=", "'m' has no value");
  expect_bad("", "empty shape");
  expect_bad("m=1.5", "m=1.5");
}

TEST(Shape, AnUnnamedShapeIsToldHowToNameItsDimensions) {
  Rng r;
  SCOPED_TRACE(r.seed());
  const std::string text = fmt::format("{}x{}x{}", r.uniform(1, 64), r.uniform(1, 8192), r.uniform(1, 8192));
  expect_bad(text, "dimensions are named, as name=value pairs: e.g. m=16,n=4096,k=4096");
  expect_bad(text, "'" + text + "'");
}

TEST(Shape, LargestValueIsAccepted) { EXPECT_EQ(Shape::parse("m=2147483647").at("m"), 2147483647); }

TEST(Shape, NormalizeReordersAndNamesMissingOrUnknown) {
  Rng r;
  SCOPED_TRACE(r.seed());
  const std::vector<std::string> dims = {"m", "n", "k"};
  const int64_t m = r.uniform(1, 1 << 20), n = r.uniform(1, 1 << 20), k = r.uniform(1, 1 << 20);
  const Shape s = Shape::parse(fmt::format("k={},m={},n={}", k, m, n)).normalized(dims);
  EXPECT_EQ(s.canonical(), fmt::format("m={},n={},k={}", m, n, k));
  try {
    (void)Shape::parse(fmt::format("m={},n={}", m, n)).normalized(dims);
    ADD_FAILURE() << "missing k accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find("missing dimension 'k'"), std::string::npos) << e.what();
  }
  try {
    (void)Shape::parse(fmt::format("m={},n={},k={},q=3", m, n, k)).normalized(dims);
    ADD_FAILURE() << "unknown q accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find("unknown dimension 'q'"), std::string::npos) << e.what();
  }
}

TEST(Shape, AtThrowsForAbsentDimension) {
  const Shape s = Shape::parse("m=3,n=5");
  EXPECT_THROW((void)s.at("k"), Error);
}

TEST(Shape, DistanceIsSumOfAbsLog2Ratios) {
  Rng r;
  SCOPED_TRACE(r.seed());
  for (int i = 0; i < 100; ++i) {
    const int64_t a[3] = {r.uniform(1, 1 << 20), r.uniform(1, 1 << 20), r.uniform(1, 1 << 20)};
    const int64_t b[3] = {r.uniform(1, 1 << 20), r.uniform(1, 1 << 20), r.uniform(1, 1 << 20)};
    const Shape sa = Shape::parse(fmt::format("m={},n={},k={}", a[0], a[1], a[2]));
    // Same dimensions in another order: the distance must not depend on the order.
    const Shape sb = Shape::parse(fmt::format("k={},m={},n={}", b[2], b[0], b[1]));
    double want = 0;
    for (int d = 0; d < 3; ++d)
      want += std::fabs(std::log(double(a[d])) - std::log(double(b[d]))) / std::log(2.0);
    EXPECT_NEAR(sa.distance(sb), want, 1e-9);
    EXPECT_NEAR(sb.distance(sa), want, 1e-9);
    EXPECT_EQ(sa.distance(sa), 0.0);
  }
  EXPECT_TRUE(std::isinf(Shape::parse("m=1,n=2").distance(Shape::parse("m=1,k=2"))));
  EXPECT_TRUE(std::isinf(Shape::parse("m=1,n=2").distance(Shape::parse("m=1,n=2,k=3"))));
}

}  // namespace
}  // namespace ktune::cache
