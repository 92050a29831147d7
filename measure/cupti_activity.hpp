#pragma once
/// A second, independent timer: kernel durations from CUPTI Activity records
/// (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: the GPU's own start/end timestamps of each kernel). The
/// worker runs it as a separate pass after the event-timed samples, so it never perturbs them; the
/// two medians agree within ~0.3 % on the H200 for a 1 ms kernel (docs/perf/measurement.md).

#include <memory>
#include <string>
#include <vector>

namespace ktune::measure {

class ActivityTimer {
 public:
  /// Starts recording kernel activity, or returns nullptr with `*why` set when CUPTI is missing or
  /// refuses (never throws for that). One ActivityTimer at a time per process.
  static std::unique_ptr<ActivityTimer> start(std::string* why);
  ~ActivityTimer();
  ActivityTimer(const ActivityTimer&) = delete;
  ActivityTimer& operator=(const ActivityTimer&) = delete;

  /// Stops recording (the caller has synchronised the context) and returns the durations in
  /// microseconds of the kernels named `function` (lowered name), in start order. Flushes again
  /// (up to ~1 s) until `expected` records of it arrived: CUPTI may deliver buffers late.
  std::vector<double> stop(const std::string& function, std::size_t expected);
  /// The same for a launch sequence: records of any of `functions`, in start order, flushing until
  /// `expected` of them arrived (runs x launches a run).
  std::vector<double> stop(const std::vector<std::string>& functions, std::size_t expected);

 private:
  ActivityTimer() = default;
  bool enabled_ = false;
};

}  // namespace ktune::measure
