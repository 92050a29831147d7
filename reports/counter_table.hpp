#pragma once
/// The winners' hardware counters of one kernel as a table for people (HTML and Markdown): one
/// row a winner, one column a metric. A stored counters object is either the CUPTI pass's record
/// (docs/measurement.md: {"available", "metrics": {name: value}, "passes", "ranges", "ms", ...})
/// or a flat {name: value} object; both give metric columns. Why counters are missing
/// ("reason", "activity_reason") becomes the row's note. The CSV and JSON reports keep the stored
/// object as data.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "reports/report_data.hpp"

namespace ktune::reports {

struct CounterTable {
  struct Row {
    size_t key = 0;                  ///< index into ReportData::keys; its winner is the row
    std::vector<std::string> cells;  ///< one a column: the number as the tables print it, or ""
    std::string note;                ///< why counters are missing or partial; "" when none
  };
  std::vector<std::string> columns;  ///< metric names, the union over the winners, sorted
  std::vector<Row> rows;             ///< the kernel's keys with a winner, in key order

  /// Whether any winner recorded a metric (else there is nothing to tabulate).
  bool has_metrics() const { return !columns.empty(); }
  /// Whether any row has a note (the table then gets a note column).
  bool has_notes() const;
};

/// The unit of a CUPTI metric from its name (Nsight Compute's naming: `.pct` and `.pct_of_peak_*`
/// are %, `__time_duration` ns, `__bytes` bytes, `.per_second` a rate, `__cycles` cycles, `.ratio`
/// a ratio), or "" when the name does not say.
std::string counter_unit(std::string_view metric);

/// The table of `kernel`'s winners in `data`.
CounterTable counter_table(const ReportData& data, std::string_view kernel);

}  // namespace ktune::reports
