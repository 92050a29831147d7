#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cache/config_cache.hpp"
#include "cache/detail/impl.hpp"
#include "cache/shape.hpp"
#include "ktune/error.hpp"

namespace ktune::cache {
namespace {

using detail::StatementLease;

/// The kernel's most recently registered source hash, if the kernel is known.
std::optional<std::string> current_hash(detail::Database& db, std::string_view kernel) {
  StatementLease s = db.cached(
      "SELECT source_hash FROM kernels WHERE name = ?1 ORDER BY registered_at DESC, id DESC LIMIT 1");
  s->bind(1, kernel);
  if (!s->step()) return std::nullopt;
  return s->text(0);
}

}  // namespace

// best() runs several single-table statements inside one read transaction rather than one join:
// SQLite prepares a four-table join in ~120 us on the reference box but a single-table statement in
// a few, and the first lookup on a fresh handle is dominated by preparing (docs/perf/cache-lookup.md).
std::optional<BestConfig> ConfigCache::best(const Lookup& lookup, bool allow_fallback) const {
  std::lock_guard lock(impl_->mu);
  detail::Database& db = impl_->db;
  detail::ReadSnapshot snapshot(db);

  int64_t kernel_id = 0;
  std::string hash;
  {
    StatementLease s =
        lookup.source_hash
            ? db.cached("SELECT id, source_hash FROM kernels WHERE name = ?1 AND source_hash = ?2")
            : db.cached(
                  "SELECT id, source_hash FROM kernels WHERE name = ?1"
                  " ORDER BY registered_at DESC, id DESC LIMIT 1");
    s->bind(1, lookup.kernel);
    if (lookup.source_hash) s->bind(2, *lookup.source_hash);
    if (!s->step()) return std::nullopt;
    kernel_id = s->int64(0);
    hash = s->text(1);
  }
  std::vector<int64_t> gpu_ids;  // usually one; several only for models that differ in memory or SMs
  {
    StatementLease s = db.cached("SELECT id FROM gpus WHERE name = ?1 ORDER BY id");
    s->bind(1, lookup.gpu_name);
    while (s->step()) gpu_ids.push_back(s->int64(0));
  }
  if (gpu_ids.empty()) return std::nullopt;

  // The measurement behind a best row; among several GPU rows of one name the fastest wins.
  std::optional<BestConfig> chosen;
  const auto consider = [&](int64_t measurement_id, std::string_view tuned_shape) {
    StatementLease m = db.cached(
        "SELECT config_name, config_json, median_us, min_us, mean_us, p90_us, stdev_us, samples"
        " FROM measurements WHERE id = ?1");
    m->bind(1, measurement_id);
    if (!m->step()) return;
    if (chosen && chosen->stats.median_us <= m->real(2)) return;
    BestConfig b;
    b.gpu_name = lookup.gpu_name;
    b.kernel = KernelInfo{lookup.kernel, hash};
    b.shape = lookup.shape;
    b.tuned_shape = std::string(tuned_shape);
    b.dtype = lookup.dtype;
    b.config_name = m->text(0);
    b.config_json = m->text(1);
    b.stats = Stats{m->real(2), m->real(3), m->real(4), m->real(5), m->real(6), m->int64(7)};
    b.measurement_id = measurement_id;
    chosen = std::move(b);
  };

  for (const int64_t gpu_id : gpu_ids) {
    StatementLease s = db.cached(
        "SELECT measurement_id FROM best WHERE gpu_id = ?1 AND kernel_id = ?2 AND shape = ?3 AND dtype = ?4");
    s->bind(1, gpu_id).bind(2, kernel_id).bind(3, lookup.shape).bind(4, lookup.dtype);
    if (s->step()) consider(s->int64(0), lookup.shape);
  }
  if (chosen || !allow_fallback) return chosen;

  const Shape wanted = Shape::parse(lookup.shape);
  double chosen_distance = std::numeric_limits<double>::infinity();
  std::string chosen_shape;
  std::vector<std::pair<int64_t, std::string>> nearest;  // (measurement, shape) at chosen_distance
  for (const int64_t gpu_id : gpu_ids) {
    StatementLease s = db.cached(
        "SELECT shape, measurement_id FROM best WHERE gpu_id = ?1 AND kernel_id = ?2 AND dtype = ?3");
    s->bind(1, gpu_id).bind(2, kernel_id).bind(3, lookup.dtype);
    while (s->step()) {
      double d = std::numeric_limits<double>::infinity();
      try {
        d = wanted.distance(Shape::parse(s->text_view(0)));
      } catch (const Error&) {
        continue;  // a stored shape that does not parse cannot be near anything
      }
      if (!std::isfinite(d)) continue;
      // Fixed tie rule so that every machine names the same fallback: distance, then shape text.
      if (d < chosen_distance || (d == chosen_distance && s->text_view(0) < chosen_shape)) {
        chosen_distance = d;
        chosen_shape = s->text(0);
        nearest.clear();
      }
      if (d == chosen_distance && s->text_view(0) == chosen_shape)
        nearest.emplace_back(s->int64(1), chosen_shape);
    }
  }
  for (const auto& [measurement_id, shape] : nearest) consider(measurement_id, shape);
  if (chosen) chosen->fallback = true;
  return chosen;
}

std::optional<std::string> ConfigCache::current_source_hash(std::string_view kernel) const {
  std::lock_guard lock(impl_->mu);
  return current_hash(impl_->db, kernel);
}

std::vector<BestConfig> ConfigCache::list_best(const Filter& filter) const {
  std::lock_guard lock(impl_->mu);
  StatementLease s = impl_->db.cached(fmt::format(
      "SELECT {} {} WHERE (?1 = '' OR g.name = ?1) AND (?2 = '' OR k.name = ?2) AND (?3 = '' OR b.dtype = ?3)"
      " AND (?4 IS NULL OR m.run_id = ?4) ORDER BY g.name, k.name, k.source_hash, b.dtype, b.shape",
      detail::kBestColumns, detail::kBestJoins));
  s->bind(1, filter.gpu_name).bind(2, filter.kernel).bind(3, filter.dtype).bind(4, filter.run_id);
  std::vector<BestConfig> out;
  while (s->step()) out.push_back(detail::read_best(*s));
  return out;
}

void ConfigCache::for_each_measurement(const Filter& filter,
                                       const std::function<void(const StoredMeasurement&)>& fn) const {
  std::lock_guard lock(impl_->mu);
  StatementLease s = impl_->db.cached(
      "SELECT m.id, m.run_id, r.started_at, g.name, g.cc_major, g.cc_minor, g.sm_count, g.memory_bytes,"
      " g.ceilings_json, k.name, k.source_hash, m.shape, m.dtype, m.config_name, m.config_json, m.outcome,"
      " m.reason, m.median_us, m.min_us, m.mean_us, m.p90_us, m.stdev_us, m.samples, m.counters_json,"
      " m.resources_json, m.baseline, m.sm_clock_mhz, m.temperature_c, m.measured_at"
      " FROM measurements m JOIN runs r ON r.id = m.run_id JOIN gpus g ON g.id = m.gpu_id"
      " JOIN kernels k ON k.id = m.kernel_id"
      " WHERE (?1 = '' OR g.name = ?1) AND (?2 = '' OR k.name = ?2) AND (?3 = '' OR m.dtype = ?3)"
      " AND (?4 IS NULL OR m.run_id = ?4) ORDER BY m.id");
  s->bind(1, filter.gpu_name).bind(2, filter.kernel).bind(3, filter.dtype).bind(4, filter.run_id);
  StoredMeasurement row;
  while (s->step()) {
    row.id = s->int64(0);
    row.run_id = s->int64(1);
    row.run_started_at = s->text(2);
    row.gpu = GpuInfo{s->text(3),
                      static_cast<int>(s->int64(4)),
                      static_cast<int>(s->int64(5)),
                      static_cast<int>(s->int64(6)),
                      s->int64(7),
                      s->text(8)};
    row.kernel = KernelInfo{s->text(9), s->text(10)};
    Measurement& m = row.m;
    m.shape = s->text(11);
    m.dtype = s->text(12);
    m.config_name = s->text(13);
    m.config_json = s->text(14);
    m.outcome = outcome_from_string(s->text_view(15));
    m.reason = s->text(16);
    if (s->is_null(17)) {
      m.stats.reset();
    } else {
      m.stats = Stats{s->real(17), s->real(18), s->real(19), s->real(20), s->real(21), s->int64(22)};
    }
    m.counters_json = s->text(23);
    m.resources_json = s->text(24);
    m.baseline = s->text(25);
    m.sm_clock_mhz = s->opt_real(26);
    m.temperature_c = s->opt_real(27);
    row.measured_at = s->text(28);
    fn(row);
  }
}

bool ConfigCache::has_measurement(int64_t gpu_id, int64_t kernel_id, std::string_view shape,
                                  std::string_view dtype, std::string_view config_name) const {
  std::lock_guard lock(impl_->mu);
  StatementLease s = impl_->db.cached(
      "SELECT 1 FROM measurements WHERE gpu_id = ?1 AND kernel_id = ?2 AND shape = ?3 AND dtype = ?4"
      " AND config_name = ?5 LIMIT 1");
  s->bind(1, gpu_id).bind(2, kernel_id).bind(3, shape).bind(4, dtype).bind(5, config_name);
  return s->step();
}

std::vector<GpuInfo> ConfigCache::gpus() const {
  std::lock_guard lock(impl_->mu);
  StatementLease s = impl_->db.cached(
      "SELECT name, cc_major, cc_minor, sm_count, memory_bytes, ceilings_json FROM gpus ORDER BY id");
  std::vector<GpuInfo> out;
  while (s->step()) {
    out.push_back(GpuInfo{s->text(0), static_cast<int>(s->int64(1)), static_cast<int>(s->int64(2)),
                          static_cast<int>(s->int64(3)), s->int64(4), s->text(5)});
  }
  return out;
}

std::vector<RunInfo> ConfigCache::runs() const {
  std::lock_guard lock(impl_->mu);
  StatementLease s = impl_->db.cached(
      "SELECT started_at, host, ktune_version, arguments, driver_version, cuda_version FROM runs ORDER BY "
      "id");
  std::vector<RunInfo> out;
  while (s->step()) {
    out.push_back(RunInfo{s->text(0), s->text(1), s->text(2), s->text(3), s->text(4), s->text(5)});
  }
  return out;
}

}  // namespace ktune::cache
