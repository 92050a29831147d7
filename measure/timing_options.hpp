#pragma once
/// Every knob of the timing protocol (docs/measurement.md "Timing protocol", docs/measurement.md) in one
/// struct. The defaults are the protocol; `ktune bench` and `ktune tune` expose each field as a flag
/// and the worker receives the struct with every candidate, so parent and worker never disagree.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ktune::measure {

/// How consecutive samples are kept from reading each other's data out of L2.
enum class FlushMode {
  /// Rotate among copies of the input/output buffers whose total exceeds `l2_flush_factor` x the L2
  /// size, every launch of a graph batch on the next set: each launch reads cold data and leaves no
  /// one else's dirty lines behind (what a model served from CUDA graphs sees). The default.
  kRotate,
  /// Write a scratch buffer of `l2_flush_factor` x the L2 size before every sample. The L2 is left
  /// full of dirty lines the timed kernel has to write back (up to the L2 size of extra DRAM
  /// writes), and in a graph batch only the first launch is cold.
  kL2,
  /// kL2 followed by a read of a second such buffer: the L2 holds clean lines only.
  kL2Clean,
  kNone,  ///< no flush: hot-cache timing
};

/// "rotate", "l2", "l2-clean", "none".
std::string_view to_string(FlushMode mode);
/// Inverse of to_string; throws ktune::Error(kBadInput) naming the value.
FlushMode flush_mode_from_string(std::string_view name);

/// Defaults for the CUPTI range-profiler metrics (docs/measurement.md: DRAM bytes read and written, SM
/// throughput, achieved occupancy, L2 hit rate, kernel duration).
std::vector<std::string> default_metrics();

/// The timing protocol's knobs, with their defaults.
struct TimingOptions {
  // ---- warm-up: both conditions must hold before the first sample ----
  int warmup_min_launches = 10;  ///< docs/measurement.md: at least 10 launches
  double warmup_min_ms = 20.0;   ///< ... and at least 20 ms (lets clocks ramp up)

  // ---- flushing ----
  FlushMode flush = FlushMode::kRotate;
  /// The flush buffer is this many times the L2 size; 2x evicts every line under LRU-like
  /// replacement (nvbench's l2flush uses 1x; 2x leaves margin for the H200's partitioned 60 MiB L2).
  double l2_flush_factor = 2.0;
  /// Upper bound on buffer sets kept for FlushMode::kRotate (memory bound for tiny problems).
  int rotate_max_sets = 64;

  // ---- batching ----
  /// Work whose single-launch time is under this is timed in CUDA-graph batches, as decode work is
  /// served (docs/measurement.md): the default covers decode-size kernels. An eager launch also
  /// costs ~4.3 us of host time on the H200, so a lone short kernel timed eagerly has launch gaps
  /// in it. 0: per-launch events for everything.
  double graph_batch_threshold_us = 1000.0;
  /// A batched sample aims at this much GPU time (launch count = target / estimate, at least 2): the
  /// graph's own launch latency (~3-8 us on the H200) is spread over the launches, so at 200 us a
  /// 140 us kernel batched in twos read 2.5 % above its CUPTI Activity span; at 2000 us, ~0.3 %.
  double graph_batch_target_us = 2000.0;
  /// Cap on launches in one graph (graph instantiation cost grows with it).
  int graph_batch_max_launches = 1000;

  // ---- stopping rule ----
  /// Stop when the relative standard error of the median is at or below this (docs/measurement.md: 0.5 %).
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

}  // namespace ktune::measure
