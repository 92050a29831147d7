#pragma once
/// When to stop taking samples of one kernel (docs/measurement.md "Timing protocol").
///
/// Converged: at least `min_samples`, the relative standard error of the median (statistics.hpp)
/// at or under `rse_target`, AND the medians of the first and second half of the stream agree
/// within `kDriftFactor * rse_target` (a stream that drifts, e.g. while clocks fall with
/// temperature, has a tight median interval but no single true value; it is sampled to the cap
/// and reported as drifting). Otherwise stop at the sample cap or the time cap.

#include <string_view>
#include <vector>

#include "measure/statistics.hpp"
#include "measure/timing_options.hpp"

namespace ktune::measure {

/// Why sampling stopped (or that it goes on).
enum class StopReason { kContinue, kConverged, kSampleCap, kTimeCap };
/// "continue", "converged", "sample_cap", "time_cap".
std::string_view to_string(StopReason reason);

class StoppingRule {
 public:
  /// Half-stream medians may differ by this many RSE targets before the stream counts as drifting.
  /// Each half has twice the variance of the whole, so their difference has SD ~= 2*SE; at
  /// SE = target, 4*target is a 2-sigma band (a steady stream passes ~95 % of checks).
  static constexpr double kDriftFactor = 4.0;

  explicit StoppingRule(const TimingOptions& options);

  /// Adds one sample (microseconds).
  void add(double sample_us);
  /// Decides after the samples so far, `elapsed_ms` into the timed loop.
  StopReason check(double elapsed_ms) const;

  /// Relative difference of the second-half median to the first-half median (0 for < 4 samples).
  double drift() const;
  /// Current relative standard error of the median (+inf for < 3 samples).
  double rse() const;
  std::size_t size() const { return samples_.size(); }
  /// Samples in arrival order.
  const std::vector<double>& samples() const { return samples_; }
  /// Statistics of all samples so far (throws ktune::Error when empty).
  SampleStats stats() const { return summarize(samples_); }

 private:
  double rse_target_;
  int min_samples_;
  int max_samples_;
  double max_time_ms_;
  std::vector<double> samples_;
  std::vector<double> sorted_;
};

}  // namespace ktune::measure
