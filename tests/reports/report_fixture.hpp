#pragma once
/// Random report fixtures: GPUs, runs and measurements of several kernels (gemm and copy with
/// stored work, softmax without), with failed configs, baselines, counters and a named winner
/// per key. With `hostile` every kind of name also carries markup, quotes, CSV separators,
/// U+2028 and non-ASCII text.

#include <cstdint>
#include <vector>

#include "cache/config_cache.hpp"
#include "reports/report_data.hpp"

namespace ktune::reports::testing {

struct FixtureOptions {
  uint32_t seed = 1;
  int shapes_per_kernel = 4;
  int configs_per_shape = 24;
  bool hostile = false;
  bool two_gpus = false;
};

struct Fixture {
  std::vector<std::pair<int64_t, cache::RunInfo>> runs;
  std::vector<cache::StoredMeasurement> measurements;  ///< ids 1..n in order
  std::vector<int64_t> best_ids;                       ///< one named winner per key with an ok candidate
};

Fixture make_fixture(const FixtureOptions& options);

/// The fixture through ReportBuilder (the in-memory path; no database).
ReportData build(const Fixture& fixture, bool winners_only = false);

/// Markup that must never become an element: each hostile name contains it.
inline constexpr const char* kHostileMarkup = "<img src=x onerror=\"document.title='PWNED'\">";

}  // namespace ktune::reports::testing
