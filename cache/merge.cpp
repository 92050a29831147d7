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
  detail::RowImporter importer(impl_->db, impl_->work_model);
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
    StatementLease s =
        in.cached(fmt::format("SELECT {} FROM measurements m ORDER BY m.id", detail::kMeasurementColumns));
    detail::SourceMeasurement row;
    while (s->step()) {
      row.id = s->int64(0);
      row.run_id = s->int64(1);
      row.gpu_id = s->int64(2);
      row.kernel_id = s->int64(3);
      detail::read_measurement(*s, row.m);
      row.measured_at = s->text(22);
      importer.add_measurement(row);
    }
  }
  {
    StatementLease s = in.cached("SELECT gpu_id, kernel_id, shape, dtype, layout, measurement_id FROM best");
    while (s->step()) {
      importer.add_best({s->int64(0), s->int64(1), s->text(2), s->dtype(3), s->text(4), s->int64(5)});
    }
  }
  tx.commit();
  return importer.stats();
}

}  // namespace ktune::cache
