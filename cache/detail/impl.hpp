#pragma once
/// ConfigCache's private state and the helpers its .cpp files share.

#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>

#include "cache/config_cache.hpp"
#include "cache/detail/sqlite_db.hpp"

namespace ktune::cache {

struct ConfigCache::Impl {
  Impl(const std::filesystem::path& p, Mode m, detail::Database::Open open) : path(p), mode(m), db(p, open) {}

  std::filesystem::path path;
  Mode mode;
  int version = 0;
  /// Every public call holds this lock: one connection, used by one thread at a time.
  mutable std::mutex mu;
  mutable detail::Database db;
  /// Fills the work of measurements imported or merged without it (ConfigCache::open).
  WorkModel work_model;

  /// Throws ktune::Error(kRuntime) when this handle was opened read-only.
  void require_writable(std::string_view what) const;
};

namespace detail {

/// Current time as ISO-8601 UTC with milliseconds, e.g. 2025-01-31T12:00:00.123Z.
std::string now_iso();

/// Throws ktune::Error(kBadInput) unless `text` is a JSON object; `what` names the field.
void require_json_object(std::string_view text, std::string_view what);

/// Throws ktune::Error(kBadInput) unless `fidelity` is finite and > 0; `config_name` names the row.
void require_fidelity(double fidelity, std::string_view config_name);

/// Throws ktune::Error(kBadInput) unless each present field of `work` is finite and > 0.
void require_work(const Work& work, std::string_view config_name);

/// Inserts one measurement: ?1 run_id, ?2 gpu_id, ?3 kernel_id, ?4 shape, ?5 dtype, ?6 config_name,
/// ?7 config_json, ?8 outcome, ?9 reason, ?10..?15 median, min, mean, p90, stdev, samples (NULL when
/// not timed), ?16 counters_json, ?17 resources_json, ?18 baseline, ?19 sm_clock_mhz,
/// ?20 temperature_c, ?21 measured_at, ?22 layout, ?23 fidelity, ?24 verified, ?25 work_flops,
/// ?26 work_bytes.
inline constexpr const char* kInsertMeasurement =
    "INSERT INTO measurements (run_id, gpu_id, kernel_id, shape, dtype, config_name, config_json, outcome,"
    " reason, median_us, min_us, mean_us, p90_us, stdev_us, samples, counters_json, resources_json,"
    " baseline, sm_clock_mhz, temperature_c, measured_at, layout, fidelity, verified, work_flops, work_bytes)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,"
    " ?21, ?22, ?23, ?24, ?25, ?26)";

/// Columns of every measurement read in full (for_each_measurement, merge), in the order
/// read_measurement() expects, from `measurements m`.
inline constexpr const char* kMeasurementColumns =
    "m.id, m.run_id, m.gpu_id, m.kernel_id, m.shape, m.dtype, m.layout, m.config_name, m.config_json,"
    " m.outcome, m.reason, m.median_us, m.min_us, m.mean_us, m.p90_us, m.stdev_us, m.samples,"
    " m.counters_json, m.resources_json, m.baseline, m.sm_clock_mhz, m.temperature_c, m.measured_at,"
    " m.fidelity, m.verified, m.work_flops, m.work_bytes";
/// How many columns kMeasurementColumns has; extra columns of a query start here.
inline constexpr int kMeasurementColumnCount = 27;

/// Fills `m` from a row laid out as kMeasurementColumns (ids and measured_at are the caller's).
void read_measurement(const Statement& s, Measurement& m);

/// Columns shared by every query that yields a BestConfig, in the order read_best() expects.
inline constexpr const char* kBestColumns =
    "g.name, k.name, k.source_hash, b.shape, b.dtype, m.config_name, m.config_json, m.median_us, m.min_us, "
    "m.mean_us, m.p90_us, m.stdev_us, m.samples, m.id, b.layout, m.verified";
inline constexpr const char* kBestJoins =
    " FROM best b JOIN gpus g ON g.id = b.gpu_id JOIN kernels k ON k.id = b.kernel_id"
    " JOIN measurements m ON m.id = b.measurement_id ";

/// A BestConfig from a row laid out as kBestColumns (fallback false, tuned_shape = shape).
BestConfig read_best(const Statement& s);

}  // namespace detail
}  // namespace ktune::cache
