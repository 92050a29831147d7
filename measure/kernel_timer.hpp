#pragma once
/// The one timing path (docs/measurement.md): everything ktune times — candidates in the worker,
/// the cuBLAS baseline, the benches — goes through KernelTimer, so every number follows the same
/// protocol: warm-up (>= warmup_min_launches and >= warmup_min_ms), then, for work whose warm-up
/// estimate is under graph_batch_threshold_us, CUDA-graph batches of back-to-back launches (what a
/// model served from CUDA graphs pays), samples under the stopping rule, each preceded by the
/// flush. With FlushMode::kRotate the launches rotate over buffer sets whose total exceeds
/// l2_flush_factor x the L2 size, so every launch of a batch reads cold data; when those sets do
/// not fit in free memory, plan_flush() falls back to an L2 flush and says so.

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "measure/flush_plan.hpp"
#include "measure/statistics.hpp"
#include "measure/stopping_rule.hpp"
#include "measure/timing_options.hpp"

namespace ktune::measure {

class L2Flusher;
class UtilityKernels;

/// Device memory free in the current context (cuMemGetInfo).
uint64_t free_device_bytes();

/// One timed measurement.
struct TimingResult {
  std::vector<double> samples_us;  ///< per launch of the work, in arrival order
  SampleStats stats;
  StopReason stop = StopReason::kContinue;
  double drift = 0;
  int launches_per_sample = 1;  ///< > 1: samples are CUDA-graph batches
  double estimate_us = 0;       ///< the warm-up's estimate of one launch
};

class KernelTimer {
 public:
  /// `utility` is needed for FlushMode::kL2Clean (its read kernel); the context must be current.
  KernelTimer(const TimingOptions& options, FlushPlan plan, int64_t l2_bytes, CUstream stream,
              const UtilityKernels* utility = nullptr);
  ~KernelTimer();
  KernelTimer(const KernelTimer&) = delete;
  KernelTimer& operator=(const KernelTimer&) = delete;

  /// Times `launch(set)`, which enqueues one run of the work on buffer set `set` (< plan().sets)
  /// on the stream. Throws what the launches throw.
  TimingResult time(const std::function<void(std::size_t set)>& launch);

  /// The flush before a pass outside the timed loop (CUPTI activity, counters).
  void flush();
  const FlushPlan& plan() const { return plan_; }

 private:
  double warm_up(const std::function<void(std::size_t)>& launch);

  TimingOptions options_;
  FlushPlan plan_;
  CUstream stream_;
  std::unique_ptr<L2Flusher> flusher_;
  std::size_t next_set_ = 0;
};

}  // namespace ktune::measure
