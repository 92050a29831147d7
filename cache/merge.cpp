#include <fmt/format.h>

#include "cache/config_cache.hpp"
#include "cache/detail/impl.hpp"
#include "cache/detail/row_importer.hpp"
#include "ktune/error.hpp"

namespace ktune::cache {

using detail::StatementLease;

MergeStats ConfigCache::merge(const std::filesystem::path& other) {
  impl_->require_writable("merge");
  std::error_code ec;
  if (std::filesystem::equivalent(other, impl_->path, ec)) {
    throw Error(ErrorKind::kBadInput, fmt::format("cannot merge {} into itself", other.string()));
  }
  ConfigCache src = ConfigCache::open(other, Mode::kReadOnly);
  detail::Database& in = src.impl_->db;
  detail::ReadSnapshot snapshot(in);
  std::lock_guard lock(impl_->mu);
  detail::Transaction tx(impl_->db);
  detail::RowImporter importer(impl_->db);
  {
    StatementLease s = in.cached(
        "SELECT id, name, cc_major, cc_minor, sm_count, memory_bytes, ceilings_json FROM gpus ORDER BY id");
    while (s->step()) {
      importer.add_gpu(s->int64(0),
                       GpuInfo{s->text(1), static_cast<int>(s->int64(2)), static_cast<int>(s->int64(3)),
                               static_cast<int>(s->int64(4)), s->int64(5), s->text(6)});
    }
  }
  {
    StatementLease s = in.cached("SELECT id, name, source_hash, registered_at FROM kernels ORDER BY id");
    while (s->step()) importer.add_kernel({s->int64(0), {s->text(1), s->text(2)}, s->text(3)});
  }
  {
    StatementLease s = in.cached(
        "SELECT id, started_at, host, ktune_version, arguments, driver_version, cuda_version FROM runs ORDER "
        "BY id");
    while (s->step()) {
      importer.add_run(
          {s->int64(0), {s->text(1), s->text(2), s->text(3), s->text(4), s->text(5), s->text(6)}});
    }
  }
  {
    StatementLease s = in.cached(
        "SELECT id, run_id, gpu_id, kernel_id, shape, dtype, config_name, config_json, outcome, reason, "
        "median_us,"
        " min_us, mean_us, p90_us, stdev_us, samples, counters_json, resources_json, baseline, sm_clock_mhz,"
        " temperature_c, measured_at FROM measurements ORDER BY id");
    detail::SourceMeasurement row;
    while (s->step()) {
      row.id = s->int64(0);
      row.run_id = s->int64(1);
      row.gpu_id = s->int64(2);
      row.kernel_id = s->int64(3);
      Measurement& m = row.m;
      m.shape = s->text(4);
      m.dtype = s->text(5);
      m.config_name = s->text(6);
      m.config_json = s->text(7);
      m.outcome = outcome_from_string(s->text_view(8));
      m.reason = s->text(9);
      if (s->is_null(10)) {
        m.stats.reset();
      } else {
        m.stats = Stats{s->real(10), s->real(11), s->real(12), s->real(13), s->real(14), s->int64(15)};
      }
      m.counters_json = s->text(16);
      m.resources_json = s->text(17);
      m.baseline = s->text(18);
      m.sm_clock_mhz = s->opt_real(19);
      m.temperature_c = s->opt_real(20);
      row.measured_at = s->text(21);
      importer.add_measurement(row);
    }
  }
  {
    StatementLease s = in.cached("SELECT gpu_id, kernel_id, shape, dtype, measurement_id FROM best");
    while (s->step()) importer.add_best({s->int64(0), s->int64(1), s->text(2), s->text(3), s->int64(4)});
  }
  tx.commit();
  return importer.stats();
}

}  // namespace ktune::cache
