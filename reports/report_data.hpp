#pragma once
/// The in-memory model every report format is written from: the measurements that matched the
/// filter, each with its derived quantities (TFLOP/s, GB/s, % of roofline, speed-up over the
/// baseline), grouped by key (GPU, kernel, shape, dtype, layout) with the winner and the baseline of
/// each.
/// ReportBuilder fills it; load_report_data (report_loader.hpp) fills it from a ConfigCache.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cache/config_cache.hpp"
#include "reports/roofline.hpp"

namespace ktune::reports {

/// "ok", "compile_error", ... (the names of ktune::Outcome, core/outcome.hpp; docs/design.md "Names and
/// outcomes"). The reports count outcomes in arrays of ktune::kOutcomeCount.
std::string_view outcome_name(Outcome outcome);

/// A (name, text) pair: a config parameter or counter, its value as text (strings unquoted,
/// numbers as JSON writes them, arrays and objects as compact JSON).
using NamedValue = std::pair<std::string, std::string>;

/// One measurement and what the report derives from it.
struct ReportRow {
  /// The measurement; all text valid UTF-8, and config_json, counters_json and resources_json
  /// compact JSON objects ("{}" where the stored text was not one).
  cache::StoredMeasurement stored;
  size_t gpu = 0;                                     ///< index into ReportData::gpus
  size_t key = 0;                                     ///< index into ReportData::keys
  std::vector<NamedValue> params;                     ///< config parameters, sorted by name
  std::vector<NamedValue> counters;                   ///< counters, sorted by name
  std::vector<std::pair<std::string, int64_t>> dims;  ///< shape dimensions in canonical order
  Work work;                                          ///< stored with the measurement (stored.m.work)
  Roofline roofline;                                  ///< empty unless outcome ok and timed
  std::optional<double> speedup;                      ///< baseline median / this median
  bool winner = false;
  /// How it was timed, from its resources: the flush plan used and "graph xN" (N launches a sample)
  /// or "events", e.g. "rotate, graph x37"; "" for a measurement that does not record it.
  std::string timing;

  /// Outcome ok with statistics.
  bool timed_ok() const { return stored.m.outcome == ktune::Outcome::kOk && stored.m.stats.has_value(); }
  double median_us() const { return stored.m.stats ? stored.m.stats->median_us : 0; }
};

/// One key (GPU, kernel with source hash, shape, dtype, layout) and its summary. The winner and
/// the baseline are rows of this key, so of its layout.
struct ReportKey {
  size_t gpu = 0;
  std::string kernel;
  std::string source_hash;
  std::string shape;
  DType dtype = DType::kF32;
  std::string layout;            ///< the kernel's layout or mode ("nt", "nn+bias", "causal"; "" for none)
  std::optional<size_t> winner;  ///< row index of the winner
  /// Row index of the baseline the speed-up is over: by name (cublas, cublaslt, default, others),
  /// within one name the most recently measured.
  std::optional<size_t> baseline;
  std::array<int64_t, kOutcomeCount> outcome_counts{};
  std::vector<size_t> rows;  ///< row indices, in id order
};

/// A run with its id.
struct ReportRun {
  int64_t id = 0;
  cache::RunInfo info;
};

/// Everything a report shows.
struct ReportData {
  std::string ktune_version;
  std::string generated_at;  ///< ISO-8601 UTC
  std::string db_path;       ///< shown in headers; may be empty
  cache::Filter filter;
  bool winners_only = false;  ///< writers list the winners' rows only (derived values use all rows)

  std::vector<cache::GpuInfo> gpus;  ///< the GPUs the rows belong to, in first-seen order
  std::vector<ReportRun> runs;       ///< the runs the rows belong to, by id
  std::vector<ReportRow> rows;       ///< in the order added (id order from the loader)
  std::vector<ReportKey> keys;       ///< in first-seen order
  std::vector<std::string> kernels;  ///< kernel names, sorted

  std::vector<std::string> param_columns;    ///< union of parameter names, sorted
  std::vector<std::string> dim_columns;      ///< union of shape dimension names, sorted
  std::vector<std::string> counter_columns;  ///< union of counter names, sorted

  /// Whether a writer lists `row` (all rows, or only winners under winners_only).
  bool listed(const ReportRow& row) const { return !winners_only || row.winner; }
};

}  // namespace ktune::reports
