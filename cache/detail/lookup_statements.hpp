#pragma once
/// The statements ConfigCache::best() runs, named once so that a handle can prepare them when it
/// opens. Preparing a statement costs 7-15 us of CPU on the reference box (SQLite's parser and
/// planner, docs/perf/cache-lookup.md), several times what executing it costs; a handle that opens
/// pays it once, then every lookup, the first included, only executes.

#include <array>
#include <string_view>

namespace ktune::cache::detail {

class Database;

/// The kernel's most recently registered row: (id, source_hash). ?1 name.
inline constexpr std::string_view kSqlKernelLatest =
    "SELECT id, source_hash FROM kernels WHERE name = ?1 ORDER BY registered_at DESC, id DESC LIMIT 1";

/// The kernel row of one source hash: (id, source_hash). ?1 name, ?2 hash.
inline constexpr std::string_view kSqlKernelByHash =
    "SELECT id, source_hash FROM kernels WHERE name = ?1 AND source_hash = ?2";

/// Every GPU row of one name: (id). ?1 name.
inline constexpr std::string_view kSqlGpusByName = "SELECT id FROM gpus WHERE name = ?1 ORDER BY id";

/// The best row of an exact key: (measurement_id). ?1 gpu_id, ?2 kernel_id, ?3 shape, ?4 dtype, ?5 layout.
inline constexpr std::string_view kSqlBestExact =
    "SELECT measurement_id FROM best WHERE gpu_id = ?1 AND kernel_id = ?2 AND shape = ?3 AND dtype = ?4"
    " AND layout = ?5";

/// The measurement behind a best row. ?1 id.
inline constexpr std::string_view kSqlMeasurementById =
    "SELECT config_name, config_json, median_us, min_us, mean_us, p90_us, stdev_us, samples, verified"
    " FROM measurements WHERE id = ?1";

/// The statements of an exact lookup (the fallback's scan is prepared when first needed).
inline constexpr std::array<std::string_view, 5> kExactLookupStatements = {
    kSqlKernelLatest, kSqlKernelByHash, kSqlGpusByName, kSqlBestExact, kSqlMeasurementById};

/// Prepares the exact-lookup statements into `db`'s statement cache.
void prepare_lookup_statements(Database& db);

}  // namespace ktune::cache::detail
