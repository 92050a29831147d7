#include "measure/stopping_rule.hpp"

#include <algorithm>
#include <cmath>

namespace ktune::measure {

std::string_view to_string(StopReason reason) {
  switch (reason) {
    case StopReason::kContinue:
      return "continue";
    case StopReason::kConverged:
      return "converged";
    case StopReason::kSampleCap:
      return "sample_cap";
    case StopReason::kTimeCap:
      return "time_cap";
  }
  return "?";
}

StoppingRule::StoppingRule(const TimingOptions& options)
    : rse_target_(options.rse_target),
      min_samples_(options.min_samples),
      max_samples_(options.max_samples),
      max_time_ms_(options.max_time_ms) {
  samples_.reserve(static_cast<std::size_t>(max_samples_));
  sorted_.reserve(static_cast<std::size_t>(max_samples_));
}

void StoppingRule::add(double sample_us) {
  samples_.push_back(sample_us);
  sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), sample_us), sample_us);
}

double StoppingRule::rse() const { return rse_of_median_sorted(sorted_); }

double StoppingRule::drift() const {
  const std::size_t n = samples_.size();
  if (n < 4) return 0;
  auto half_median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return percentile_sorted(v, 0.5);
  };
  const double first = half_median({samples_.begin(), samples_.begin() + static_cast<long>(n / 2)});
  const double second = half_median({samples_.begin() + static_cast<long>(n / 2), samples_.end()});
  return first > 0 ? (second - first) / first : 0;
}

StopReason StoppingRule::check(double elapsed_ms) const {
  const auto n = static_cast<int>(samples_.size());
  if (n >= min_samples_ && rse() <= rse_target_ && std::abs(drift()) <= kDriftFactor * rse_target_) {
    return StopReason::kConverged;
  }
  if (n >= max_samples_) return StopReason::kSampleCap;
  if (elapsed_ms >= max_time_ms_ && n >= 1) return StopReason::kTimeCap;
  return StopReason::kContinue;
}

}  // namespace ktune::measure
