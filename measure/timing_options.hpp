#pragma once
/// Every knob of the timing protocol (docs/design.md "Timing protocol", docs/measurement.md) in one
/// struct. The defaults are the protocol; `ktune bench` and `ktune tune` expose each field as a flag
/// and the worker receives the struct with every candidate, so parent and worker never disagree.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ktune::harness {

/// How consecutive samples are kept from reading each other's data out of L2.
enum class FlushMode {
  kL2,      ///< write a scratch buffer of `l2_flush_factor` x the L2 size before every sample
  kRotate,  ///< rotate among copies of the input/output buffers whose total exceeds the L2 size
  kNone,    ///< no flush: hot-cache timing
};

/// "l2", "rotate", "none".
std::string_view to_string(FlushMode mode);
/// Inverse of to_string; throws ktune::Error(kBadInput) naming the value.
FlushMode flush_mode_from_string(std::string_view name);

/// Defaults for the CUPTI range-profiler metrics (docs/design.md: DRAM bytes read and written, SM
/// throughput, achieved occupancy, L2 hit rate, kernel duration).
std::vector<std::string> default_metrics();

/// The timing protocol's knobs, with their defaults.
struct TimingOptions {
  // ---- warm-up: both conditions must hold before the first sample ----
  int warmup_min_launches = 10;  ///< docs/design.md: at least 10 launches
  double warmup_min_ms = 20.0;   ///< ... and at least 20 ms (lets clocks ramp up)

  // ---- flushing ----
  FlushMode flush = FlushMode::kL2;
  /// The flush buffer is this many times the L2 size; 2x evicts every line under LRU-like
  /// replacement (nvbench's l2flush uses 1x; 2x leaves margin for the H200's partitioned 60 MiB L2).
  double l2_flush_factor = 2.0;
  /// Upper bound on buffer sets kept for FlushMode::kRotate (memory bound for tiny problems).
  int rotate_max_sets = 64;

  // ---- batching ----
  /// Kernels whose single-launch time is under this are timed in CUDA-graph batches: an eager
  /// launch costs ~4.3 us on the H200 (docs/perf/measurement.md), so a lone ~10 us kernel would be
  /// timed with launch gaps in it.
  double graph_batch_threshold_us = 10.0;
  /// A batched sample aims at this much GPU time (launch count = target / estimate).
  double graph_batch_target_us = 200.0;
  /// Cap on launches in one graph (graph instantiation cost grows with it).
  int graph_batch_max_launches = 1000;

  // ---- stopping rule ----
  /// Stop when the relative standard error of the median is at or below this (docs/design.md: 0.5 %).
  double rse_target = 0.005;
  /// Never stop on convergence before this many samples (the order-statistics interval needs
  /// ranks on both sides of the median).
  int min_samples = 10;
  /// Sample cap.
  int max_samples = 1000;
  /// Time cap for the timed loop of one candidate (warm-up and verification not included).
  double max_time_ms = 1000.0;

  // ---- tuning-level knobs ----
  /// The best this many candidates are re-timed, interleaved, before a winner is named.
  int retime_top_k = 3;
  /// Wall-clock limit for one candidate in the worker (load, verify, time, count); past it the
  /// parent kills the worker and records `timeout`.
  double candidate_timeout_ms = 30000.0;

  // ---- extra passes (never part of the timed samples) ----
  bool counters = false;                                 ///< run the CUPTI range-profiler pass
  std::vector<std::string> metrics = default_metrics();  ///< metrics for the counter pass
  bool activity_timer = false;  ///< also time with CUPTI Activity kernel records (second timer)

  /// Seed of the random input data (counter-based RNG: same seed, same inputs).
  uint64_t seed = 0x6b74756e65ULL;  // "ktune"

  /// Throws ktune::Error(kBadInput) naming the first field out of range.
  void validate() const;
};

}  // namespace ktune::harness
