#include "measure/statistics.hpp"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "ktune/error.hpp"

namespace ktune::measure {
namespace {

TEST(Statistics, HandWorkedFiveSamples) {
  const std::vector<double> v{5, 1, 4, 2, 3};
  const SampleStats s = summarize(v);
  EXPECT_EQ(s.samples, 5U);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.p90, 4.6);  // sorted[3.6] = 4 + 0.6 * (5 - 4)
  EXPECT_NEAR(s.stdev, std::sqrt(2.5), 1e-12);
}

TEST(Statistics, EvenCountMedianInterpolates) {
  const std::vector<double> v{7, 3, 9, 1};
  EXPECT_DOUBLE_EQ(summarize(v).median, 5);  // (3 + 7) / 2
}

TEST(Statistics, RseOfMedianOrderStatisticsHandWorked) {
  // n = 10, values 101..110: half-width 1.96*sqrt(10)/2 = 3.099, ranks j = floor(1.901) = 1,
  // k = ceil(8.099) = 9 -> (110 - 102) / (2*1.96) = 2.0408; median 105.5 -> RSE 0.019344.
  std::vector<double> v;
  for (int i = 1; i <= 10; ++i) v.push_back(100 + i);
  EXPECT_NEAR(rse_of_median_sorted(v), 8.0 / (2 * 1.959963984540054) / 105.5, 1e-9);
  EXPECT_NEAR(summarize(v).rse_median, 0.019344, 1e-5);
}

TEST(Statistics, RseIsInfiniteForTooFewSamples) {
  const std::vector<double> two{1.0, 2.0};
  EXPECT_TRUE(std::isinf(rse_of_median_sorted(two)));
  const std::vector<double> zeros{0.0, 0.0, 0.0};
  EXPECT_TRUE(std::isinf(rse_of_median_sorted(zeros)));
}

TEST(Statistics, IdenticalSamplesHaveZeroSpread) {
  const std::vector<double> v(50, 12.5);
  const SampleStats s = summarize(v);
  EXPECT_DOUBLE_EQ(s.stdev, 0);
  EXPECT_DOUBLE_EQ(s.rse_median, 0);
  EXPECT_DOUBLE_EQ(s.p90, 12.5);
}

TEST(Statistics, EmptySampleIsBadInput) {
  try {
    summarize(std::vector<double>{});
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
  }
}

TEST(Statistics, PercentileEndpoints) {
  const std::vector<double> v{2, 4, 8};
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.0), 2);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 1.0), 8);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.75), 6);
}

}  // namespace
}  // namespace ktune::measure
