#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cache/config_cache.hpp"
#include "cache/detail/impl.hpp"
#include "cache/detail/lookup_statements.hpp"
#include "core/shape.hpp"
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

/// Binds an optional layout filter: NULL (every layout) when absent.
void bind_layout(detail::Statement& s, int index, const std::optional<std::string>& layout) {
  if (layout) {
    s.bind(index, *layout);
  } else {
    s.bind_null(index);
  }
}

/// A filter's dtype as its SQL parameter: "" matches every dtype.
std::string_view dtype_filter_text(const std::optional<DType>& dtype) {
  return dtype ? to_string(*dtype) : "";
}

}  // namespace

// best() runs several single-table statements inside one read transaction rather than one join:
// SQLite prepares a four-table join in ~120 us on the reference box but a single-table statement in
// 7-15, and open() prepares those (detail/lookup_statements.hpp; docs/perf/cache-lookup.md).
std::optional<BestConfig> ConfigCache::best(const Lookup& lookup, bool allow_fallback) const {
  std::lock_guard lock(impl_->mu);
  detail::Database& db = impl_->db;
  detail::ReadSnapshot snapshot(db);

  int64_t kernel_id = 0;
  std::string hash;
  {
    StatementLease s =
        lookup.source_hash ? db.cached(detail::kSqlKernelByHash) : db.cached(detail::kSqlKernelLatest);
    s->bind(1, lookup.kernel);
    if (lookup.source_hash) s->bind(2, *lookup.source_hash);
    if (!s->step()) return std::nullopt;
    kernel_id = s->int64(0);
    hash = s->text(1);
  }
  std::vector<int64_t> gpu_ids;  // usually one; several only for models that differ in memory or SMs
  {
    StatementLease s = db.cached(detail::kSqlGpusByName);
    s->bind(1, lookup.gpu_name);
    while (s->step()) gpu_ids.push_back(s->int64(0));
  }
  if (gpu_ids.empty()) return std::nullopt;

  // The measurement behind a best row; among several GPU rows of one name the fastest wins.
  std::optional<BestConfig> chosen;
  const auto consider = [&](int64_t measurement_id, std::string_view tuned_shape) {
    StatementLease m = db.cached(detail::kSqlMeasurementById);
    m->bind(1, measurement_id);
    if (!m->step()) return;
    if (chosen && chosen->stats.median_us <= m->real(2)) return;
    BestConfig b;
    b.gpu_name = lookup.gpu_name;
    b.kernel = KernelInfo{lookup.kernel, hash};
    b.shape = lookup.shape;
    b.tuned_shape = std::string(tuned_shape);
    b.dtype = lookup.dtype;
    b.layout = lookup.layout;
    b.config_name = m->text(0);
    b.config_json = m->text(1);
    b.stats = Stats{m->real(2), m->real(3), m->real(4), m->real(5), m->real(6), m->int64(7)};
    b.measurement_id = measurement_id;
    b.verified = m->int64(8) != 0;
    chosen = std::move(b);
  };

  for (const int64_t gpu_id : gpu_ids) {
    StatementLease s = db.cached(detail::kSqlBestExact);
    s->bind(1, gpu_id).bind(2, kernel_id).bind(3, lookup.shape).bind(4, lookup.dtype).bind(5, lookup.layout);
    if (s->step()) consider(s->int64(0), lookup.shape);
  }
  if (chosen || !allow_fallback) return chosen;

  const Shape wanted = Shape::parse(lookup.shape);
  double chosen_distance = std::numeric_limits<double>::infinity();
  std::string chosen_shape;
  std::vector<std::pair<int64_t, std::string>> nearest;  // (measurement, shape) at chosen_distance
  for (const int64_t gpu_id : gpu_ids) {
    StatementLease s = db.cached(
        "SELECT shape, measurement_id FROM best WHERE gpu_id = ?1 AND kernel_id = ?2 AND dtype = ?3"
        " AND layout = ?4");
    s->bind(1, gpu_id).bind(2, kernel_id).bind(3, lookup.dtype).bind(4, lookup.layout);
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
      " AND (?4 IS NULL OR m.run_id = ?4) AND (?5 IS NULL OR b.layout = ?5)"
      " ORDER BY g.name, k.name, k.source_hash, b.dtype, b.layout, b.shape",
      detail::kBestColumns, detail::kBestJoins));
  s->bind(1, filter.gpu_name)
      .bind(2, filter.kernel)
      .bind(3, dtype_filter_text(filter.dtype))
      .bind(4, filter.run_id);
  bind_layout(*s, 5, filter.layout);
  std::vector<BestConfig> out;
  while (s->step()) out.push_back(detail::read_best(*s));
  return out;
}

void ConfigCache::for_each_measurement(const Filter& filter,
                                       const std::function<void(const StoredMeasurement&)>& fn) const {
  std::lock_guard lock(impl_->mu);
  StatementLease s = impl_->db.cached(fmt::format(
      "SELECT {}, r.started_at, g.name, g.cc_major, g.cc_minor, g.sm_count, g.memory_bytes, g.ceilings_json,"
      " k.name, k.source_hash"
      " FROM measurements m JOIN runs r ON r.id = m.run_id JOIN gpus g ON g.id = m.gpu_id"
      " JOIN kernels k ON k.id = m.kernel_id"
      " WHERE (?1 = '' OR g.name = ?1) AND (?2 = '' OR k.name = ?2) AND (?3 = '' OR m.dtype = ?3)"
      " AND (?4 IS NULL OR m.run_id = ?4) AND (?5 IS NULL OR m.layout = ?5) ORDER BY m.id",
      detail::kMeasurementColumns));
  s->bind(1, filter.gpu_name)
      .bind(2, filter.kernel)
      .bind(3, dtype_filter_text(filter.dtype))
      .bind(4, filter.run_id);
  bind_layout(*s, 5, filter.layout);
  constexpr int c = detail::kMeasurementColumnCount;
  StoredMeasurement row;
  while (s->step()) {
    row.id = s->int64(0);
    row.run_id = s->int64(1);
    detail::read_measurement(*s, row.m);
    row.measured_at = s->text(22);
    row.run_started_at = s->text(c);
    row.gpu = GpuInfo{s->text(c + 1),
                      static_cast<int>(s->int64(c + 2)),
                      static_cast<int>(s->int64(c + 3)),
                      static_cast<int>(s->int64(c + 4)),
                      s->int64(c + 5),
                      s->text(c + 6)};
    row.kernel = KernelInfo{s->text(c + 7), s->text(c + 8)};
    fn(row);
  }
}

bool ConfigCache::has_measurement(int64_t gpu_id, int64_t kernel_id, std::string_view shape, DType dtype,
                                  std::string_view layout, std::string_view config_name) const {
  std::lock_guard lock(impl_->mu);
  StatementLease s = impl_->db.cached(
      "SELECT 1 FROM measurements WHERE gpu_id = ?1 AND kernel_id = ?2 AND shape = ?3 AND dtype = ?4"
      " AND layout = ?5 AND config_name = ?6 LIMIT 1");
  s->bind(1, gpu_id).bind(2, kernel_id).bind(3, shape).bind(4, dtype).bind(5, layout).bind(6, config_name);
  return s->step();
}

bool StoredResult::answers(double requested_fidelity) const {
  switch (outcome) {
    case Outcome::kOk:
      return fidelity >= requested_fidelity;
    case Outcome::kSkipped:
      return false;
    default:
      return true;
  }
}

std::vector<StoredResult> ConfigCache::results_for(int64_t gpu_id, int64_t kernel_id, std::string_view shape,
                                                   DType dtype, std::string_view layout) const {
  std::lock_guard lock(impl_->mu);
  // The key's rows come from the measurements_key index; a key holds at most a few thousand rows.
  StatementLease s = impl_->db.cached(
      "SELECT config_name, id, outcome, reason, median_us, min_us, mean_us, p90_us, stdev_us, samples,"
      " fidelity, baseline, resources_json FROM ("
      "  SELECT *, row_number() OVER (PARTITION BY config_name ORDER BY measured_at DESC, id DESC) AS nth"
      "  FROM measurements"
      "  WHERE gpu_id = ?1 AND kernel_id = ?2 AND shape = ?3 AND dtype = ?4 AND layout = ?5)"
      " WHERE nth = 1 ORDER BY config_name");
  s->bind(1, gpu_id).bind(2, kernel_id).bind(3, shape).bind(4, dtype).bind(5, layout);
  std::vector<StoredResult> out;
  while (s->step()) {
    StoredResult r;
    r.config_name = s->text(0);
    r.measurement_id = s->int64(1);
    r.outcome = outcome_from_string(s->text_view(2));
    r.reason = s->text(3);
    if (!s->is_null(4)) {
      r.stats = Stats{s->real(4), s->real(5), s->real(6), s->real(7), s->real(8), s->int64(9)};
    }
    r.fidelity = s->real(10);
    r.baseline = s->text(11);
    r.resources_json = s->text(12);
    out.push_back(std::move(r));
  }
  return out;
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

std::vector<std::string> ConfigCache::gpu_names() const {
  std::lock_guard lock(impl_->mu);
  StatementLease s = impl_->db.cached("SELECT DISTINCT name FROM gpus ORDER BY name");
  std::vector<std::string> out;
  while (s->step()) out.push_back(s->text(0));
  return out;
}

std::vector<std::string> ConfigCache::kernel_names() const {
  std::lock_guard lock(impl_->mu);
  StatementLease s = impl_->db.cached("SELECT DISTINCT name FROM kernels ORDER BY name");
  std::vector<std::string> out;
  while (s->step()) out.push_back(s->text(0));
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
