#include "measure/timing_options.hpp"

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::measure {

std::string_view to_string(FlushMode mode) {
  switch (mode) {
    case FlushMode::kL2:
      return "l2";
    case FlushMode::kL2Clean:
      return "l2-clean";
    case FlushMode::kRotate:
      return "rotate";
    case FlushMode::kNone:
      return "none";
  }
  return "?";
}

FlushMode flush_mode_from_string(std::string_view name) {
  if (name == "l2") return FlushMode::kL2;
  if (name == "l2-clean") return FlushMode::kL2Clean;
  if (name == "rotate") return FlushMode::kRotate;
  if (name == "none") return FlushMode::kNone;
  throw Error(ErrorKind::kBadInput,
              fmt::format("unknown flush mode '{}' (expected rotate, l2, l2-clean or none)", name));
}

std::vector<std::string> default_metrics() {
  return {
      "dram__bytes_read.sum",                               // DRAM bytes read
      "dram__bytes_write.sum",                              // DRAM bytes written
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",   // SM throughput %
      "sm__warps_active.avg.pct_of_peak_sustained_active",  // achieved occupancy %
      "lts__t_sector_hit_rate.pct",                         // L2 hit rate %
      "gpu__time_duration.sum",                             // kernel duration (ns)
  };
}

void TimingOptions::validate() const {
  auto bad = [](std::string_view field, auto value, std::string_view want) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("timing option {}={} is out of range ({})", field, value, want));
  };
  if (warmup_min_launches < 0) bad("warmup_min_launches", warmup_min_launches, ">= 0");
  if (warmup_min_ms < 0) bad("warmup_min_ms", warmup_min_ms, ">= 0");
  if (l2_flush_factor < 0.5 || l2_flush_factor > 16) bad("l2_flush_factor", l2_flush_factor, "0.5..16");
  if (rotate_max_sets < 2) bad("rotate_max_sets", rotate_max_sets, ">= 2");
  if (graph_batch_threshold_us < 0) bad("graph_batch_threshold_us", graph_batch_threshold_us, ">= 0");
  if (graph_batch_target_us <= 0) bad("graph_batch_target_us", graph_batch_target_us, "> 0");
  if (graph_batch_max_launches < 1) bad("graph_batch_max_launches", graph_batch_max_launches, ">= 1");
  if (!(rse_target > 0 && rse_target < 1)) bad("rse_target", rse_target, "0 < x < 1");
  if (min_samples < 3) bad("min_samples", min_samples, ">= 3");
  if (max_samples < min_samples) bad("max_samples", max_samples, ">= min_samples");
  if (max_time_ms <= 0) bad("max_time_ms", max_time_ms, "> 0");
  if (retime_top_k < 0) bad("retime_top_k", retime_top_k, ">= 0");
  if (candidate_timeout_ms <= 0) bad("candidate_timeout_ms", candidate_timeout_ms, "> 0");
  if (counters && metrics.empty()) bad("metrics", "[]", "at least one metric when counters are on");
}

}  // namespace ktune::measure
