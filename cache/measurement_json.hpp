#pragma once
/// One measurement as a JSON object with the export format's field names (docs/export-format.md):
/// what `cache export` writes for each row (beside its ids) and what the service's /v1/results
/// answers (beside the names the ids stand for). The JSON report streams the same fields itself
/// (reports/json_reporter.cpp), its stored JSON columns copied as text.

#include <string_view>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"

namespace ktune::cache {

/// The stored JSON column `text` as JSON; text that does not parse is kept as a string.
nlohmann::json object_or_text(std::string_view text);

/// The measurement's own fields: shape, dtype, layout, config_name, config, outcome, reason, stats
/// (null without a timing), fidelity, verified, work_flops, work_bytes, counters, resources,
/// baseline, sm_clock_mhz, temperature_c (null when unknown).
nlohmann::json measurement_fields(const Measurement& m);

}  // namespace ktune::cache
