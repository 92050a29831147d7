#pragma once
/// Builds a ReportData from stored measurements: parses each row's JSON once, applies the GPU's
/// ceilings to the work stored with each row (cache::Measurement::work), picks each key's baseline
/// and winner and computes speed-ups.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "reports/report_data.hpp"

namespace ktune::reports {

class ReportBuilder {
 public:
  /// Header fields (version, time, db path, filter, winners_only) are taken from `meta`; its
  /// row containers must be empty.
  explicit ReportBuilder(ReportData meta);

  /// Registers a run (its id and info); runs never registered appear with their start time only.
  void add_run(int64_t id, const cache::RunInfo& run);
  /// Adds one measurement (copied; its text is made valid UTF-8).
  void add(const cache::StoredMeasurement& measurement);
  /// Names a measurement the winner of its key (ConfigCache's `best`). A key with no named winner
  /// gets the ok candidate (not a baseline) with the lowest median, ties by config name.
  void mark_best(int64_t measurement_id);

  /// Derives everything and hands over the result. The builder is empty afterwards.
  ReportData finish();

 private:
  size_t gpu_index(const cache::GpuInfo& gpu);
  void choose_baseline(ReportKey& key);
  void choose_winner(ReportKey& key);

  ReportData data_;
  std::unordered_map<std::string, size_t> gpu_index_;
  std::unordered_map<std::string, size_t> key_index_;
  std::unordered_map<int64_t, cache::RunInfo> run_info_;
  std::unordered_set<int64_t> best_ids_;
};

}  // namespace ktune::reports
