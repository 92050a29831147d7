#include "cli/timing_flags.hpp"

#include <CLI/CLI.hpp>

namespace ktune::cli {

void add_timing_flags(CLI::App& cmd, TimingFlags& f) {
  measure::TimingOptions& o = f.options;
  const char* g = "Timing protocol";
  cmd.add_option("--warmup-launches", o.warmup_min_launches, "Warm-up: at least this many launches")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--warmup-ms", o.warmup_min_ms, "Warm-up: at least this many milliseconds")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--flush", f.flush,
                 "Keeping L2 cold: rotate (launches rotate over input sets larger than the L2; falls back to "
                 "l2 when they do not fit, and says so), l2 (write a scratch buffer before each sample: "
                 "leaves dirty lines), l2-clean (l2, then read a second buffer), none")
      ->check(CLI::IsMember({"rotate", "l2", "l2-clean", "none"}))
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--l2-flush-factor", o.l2_flush_factor,
                 "Flush buffer / rotation size as a multiple of the L2 size")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--rotate-max-sets", o.rotate_max_sets, "At most this many buffer sets with --flush rotate")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--batch-threshold-us", o.graph_batch_threshold_us,
                 "Kernels shorter than this are timed in CUDA-graph batches, as served from graphs (0: "
                 "per-launch events for all)")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--batch-target-us", o.graph_batch_target_us, "GPU time one batched sample aims at")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--batch-max-launches", o.graph_batch_max_launches,
                 "At most this many launches in one graph")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--rse-target", o.rse_target,
                 "Stop when the relative standard error of the median is below this")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--min-samples", o.min_samples, "Never stop before this many samples")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--max-samples", o.max_samples, "Sample cap")->capture_default_str()->group(g);
  cmd.add_option("--max-time-ms", o.max_time_ms, "Time cap of the timed loop")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--retime-top-k", o.retime_top_k,
                 "Re-time the best K candidates, interleaved, before a winner")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--timeout-ms", o.candidate_timeout_ms, "Per-candidate limit; past it the worker is killed")
      ->capture_default_str()
      ->group(g);
  cmd.add_flag("--counters", o.counters, "Also run the CUPTI counter pass (a separate, untimed pass)")
      ->group(g);
  cmd.add_option("--metrics", f.metrics,
                 "Comma-separated CUPTI metrics (default: DRAM bytes, SM %, occupancy, L2 hit, duration)")
      ->group(g);
  cmd.add_flag("--activity-timer", o.activity_timer, "Also time with CUPTI Activity kernel records")
      ->group(g);
  cmd.add_option("--seed", o.seed, "Seed of the random inputs")->capture_default_str()->group(g);
}

measure::TimingOptions finish_timing_options(const TimingFlags& f) {
  measure::TimingOptions o = f.options;
  o.flush = measure::flush_mode_from_string(f.flush);
  if (!f.metrics.empty()) {
    o.metrics.clear();
    std::size_t p = 0;
    while (p <= f.metrics.size()) {
      const std::size_t q = std::min(f.metrics.find(',', p), f.metrics.size());
      if (q > p) o.metrics.push_back(f.metrics.substr(p, q - p));
      p = q + 1;
    }
  }
  o.validate();
  return o;
}

}  // namespace ktune::cli
