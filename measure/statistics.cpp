#include "measure/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "ktune/error.hpp"

namespace ktune::measure {

namespace {
constexpr double kZ95 = 1.959963984540054;  // two-sided 95 % normal quantile
}

double percentile_sorted(std::span<const double> sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

double rse_of_median_sorted(std::span<const double> sorted) {
  const std::size_t n = sorted.size();
  if (n < 3) return std::numeric_limits<double>::infinity();
  const double median = percentile_sorted(sorted, 0.5);
  if (!(median > 0)) return std::numeric_limits<double>::infinity();
  const double half = kZ95 * std::sqrt(static_cast<double>(n)) / 2.0;
  const double centre = static_cast<double>(n) / 2.0;
  const auto j = static_cast<long>(std::max(0.0, std::floor(centre - half)));
  const auto k = static_cast<long>(std::min(static_cast<double>(n - 1), std::ceil(centre + half)));
  const double se =
      (sorted[static_cast<std::size_t>(k)] - sorted[static_cast<std::size_t>(j)]) / (2.0 * kZ95);
  return se / median;
}

SampleStats summarize(std::span<const double> samples) {
  if (samples.empty()) throw Error(ErrorKind::kBadInput, "summarize: empty sample");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  SampleStats s;
  s.samples = sorted.size();
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = percentile_sorted(sorted, 0.5);
  s.p90 = percentile_sorted(sorted, 0.9);
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  if (sorted.size() > 1) {
    double ss = 0;
    for (double v : sorted) ss += (v - s.mean) * (v - s.mean);
    s.stdev = std::sqrt(ss / static_cast<double>(sorted.size() - 1));
  }
  s.rse_median = rse_of_median_sorted(sorted);
  return s;
}

}  // namespace ktune::measure
