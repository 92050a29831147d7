#pragma once
/// Fills a ReportData from a ConfigCache: the measurements matching a filter (streamed in id
/// order), the runs they belong to, and the cache's named winners.

#include "cache/config_cache.hpp"
#include "reports/report_data.hpp"

namespace ktune::reports {

/// What to report.
struct ReportQuery {
  cache::Filter filter;       ///< GPU name, kernel, dtype, run id; empty fields match everything
  bool winners_only = false;  ///< list only the winners' rows (`--winners`)
};

/// Reads everything the report needs from `db`. Throws what the cache throws (ktune::Error).
ReportData load_report_data(const cache::ConfigCache& db, const ReportQuery& query);

/// This build's version, as reports print it.
const char* ktune_version();

}  // namespace ktune::reports
