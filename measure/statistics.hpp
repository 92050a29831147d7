#pragma once
/// Summary statistics of a sample of kernel times, and the relative standard error (RSE) of the
/// median that the stopping rule watches.
///
/// RSE of the median uses the distribution-free order-statistics interval (no bootstrap: it is
/// deterministic and O(n log n)). For n sorted samples, the ranks
///   j = floor(n/2 - z*sqrt(n)/2),  k = ceil(n/2 + z*sqrt(n)/2)   (z = 1.96, 0-based, clamped)
/// bracket the population median with ~95 % confidence whatever the distribution (binomial
/// argument). Treating that interval as +-z standard errors gives
///   SE(median) ~= (x_(k) - x_(j)) / (2 z),   RSE = SE / median.
/// It widens on a bimodal sample whose modes straddle the median, so such a sample does not
/// "converge" by luck.

#include <cstddef>
#include <span>
#include <vector>

namespace ktune::measure {

/// Summary of a sample (same unit as the input, microseconds throughout ktune).
struct SampleStats {
  double median = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double p90 = 0;         ///< 90th percentile, linear interpolation between order statistics
  double stdev = 0;       ///< sample standard deviation (n-1); 0 for n < 2
  double rse_median = 0;  ///< relative standard error of the median (see file comment); inf for n < 3
  std::size_t samples = 0;
};

/// Percentile q in [0,1] of already sorted values, linear interpolation (type 7). Needs a non-empty span.
double percentile_sorted(std::span<const double> sorted, double q);

/// Relative standard error of the median of already sorted values (order-statistics formula above).
/// Returns +inf for fewer than 3 samples or a non-positive median.
double rse_of_median_sorted(std::span<const double> sorted);

/// Every statistic of `samples` (any order). Throws ktune::Error(kBadInput) on an empty sample.
SampleStats summarize(std::span<const double> samples);

}  // namespace ktune::measure
