#include "cache/detail/row_importer.hpp"

#include <fmt/format.h>

#include "cache/detail/impl.hpp"
#include "cache/detail/stored_work.hpp"
#include "ktune/error.hpp"

namespace ktune::cache::detail {

int64_t RowImporter::mapped(const std::unordered_map<int64_t, int64_t>& map, int64_t id,
                            const char* what) const {
  const auto it = map.find(id);
  if (it == map.end()) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("import: a row refers to {} id {}, which the source lacks", what, id));
  }
  return it->second;
}

void RowImporter::add_gpu(int64_t source_id, const GpuInfo& gpu) {
  require_json_object(gpu.ceilings_json, "gpu ceilings");
  StatementLease s = db_.cached(
      "INSERT INTO gpus (name, cc_major, cc_minor, sm_count, memory_bytes, ceilings_json)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
      " ON CONFLICT (name, cc_major, cc_minor, sm_count, memory_bytes) DO UPDATE SET ceilings_json ="
      " CASE WHEN ceilings_json = '{}' THEN excluded.ceilings_json ELSE ceilings_json END RETURNING id");
  s->bind(1, gpu.name).bind(2, gpu.cc_major).bind(3, gpu.cc_minor).bind(4, gpu.sm_count);
  s->bind(5, gpu.memory_bytes).bind(6, gpu.ceilings_json);
  s->step();
  gpus_[source_id] = s->int64(0);
  s->run();
}

void RowImporter::add_kernel(const SourceKernel& k) {
  // The later registration wins, so "the kernel's most recent hash" means the same after a merge.
  StatementLease s = db_.cached(
      "INSERT INTO kernels (name, source_hash, registered_at) VALUES (?1, ?2, ?3)"
      " ON CONFLICT (name, source_hash) DO UPDATE SET registered_at = max(registered_at, "
      "excluded.registered_at)"
      " RETURNING id");
  s->bind(1, k.info.name)
      .bind(2, k.info.source_hash)
      .bind(3, k.registered_at.empty() ? now_iso() : k.registered_at);
  s->step();
  kernels_[k.id] = s->int64(0);
  kernel_names_[k.id] = k.info.name;
  s->run();
}

void RowImporter::add_run(const SourceRun& r) {
  {
    StatementLease q =
        db_.cached("SELECT id FROM runs WHERE started_at = ?1 AND host = ?2 ORDER BY id LIMIT 1");
    q->bind(1, r.info.started_at).bind(2, r.info.host);
    if (q->step()) {
      runs_[r.id] = q->int64(0);
      return;
    }
  }
  StatementLease s = db_.cached(
      "INSERT INTO runs (started_at, host, ktune_version, arguments, driver_version, cuda_version)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  s->bind(1, r.info.started_at).bind(2, r.info.host).bind(3, r.info.ktune_version).bind(4, r.info.arguments);
  s->bind(5, r.info.driver_version).bind(6, r.info.cuda_version);
  s->run();
  const int64_t id = db_.last_insert_rowid();
  runs_[r.id] = id;
  new_runs_.insert(id);
}

void RowImporter::add_measurement(const SourceMeasurement& row) {
  const int64_t run = mapped(runs_, row.run_id, "run");
  const int64_t gpu = mapped(gpus_, row.gpu_id, "gpu");
  const int64_t kernel = mapped(kernels_, row.kernel_id, "kernel");
  Measurement m = row.m;
  fill_missing_work(m, kernel_names_[row.kernel_id], work_model_);
  if (new_runs_.count(run) == 0) {  // a run this import created cannot hold duplicates yet
    StatementLease q = db_.cached(
        "SELECT id FROM measurements WHERE gpu_id = ?1 AND kernel_id = ?2 AND shape = ?3 AND dtype = ?4"
        " AND layout = ?5 AND config_name = ?6 AND run_id = ?7 AND baseline = ?8 AND fidelity = ?9"
        " AND measured_at = ?10 LIMIT 1");
    q->bind(1, gpu)
        .bind(2, kernel)
        .bind(3, m.shape)
        .bind(4, m.dtype)
        .bind(5, m.layout)
        .bind(6, m.config_name);
    q->bind(7, run).bind(8, m.baseline).bind(9, m.fidelity).bind(10, row.measured_at);
    if (q->step()) {
      measurements_[row.id] = q->int64(0);
      ++stats_.measurements_skipped;
      return;
    }
  }
  require_json_object(m.config_json, "measurement config");
  require_json_object(m.counters_json, "measurement counters");
  require_json_object(m.resources_json, "measurement resources");
  require_fidelity(m.fidelity, m.config_name);
  require_work(m.work, m.config_name);
  StatementLease s = db_.cached(kInsertMeasurement);
  s->bind(1, run).bind(2, gpu).bind(3, kernel).bind(4, m.shape).bind(5, m.dtype).bind(6, m.config_name);
  s->bind(7, m.config_json).bind(8, to_string(m.outcome)).bind(9, m.reason);
  if (m.stats) {
    s->bind(10, m.stats->median_us).bind(11, m.stats->min_us).bind(12, m.stats->mean_us);
    s->bind(13, m.stats->p90_us).bind(14, m.stats->stdev_us).bind(15, m.stats->samples);
  }
  s->bind(16, m.counters_json).bind(17, m.resources_json).bind(18, m.baseline).bind(19, m.sm_clock_mhz);
  s->bind(20, m.temperature_c).bind(21, row.measured_at.empty() ? now_iso() : row.measured_at);
  s->bind(22, m.layout).bind(23, m.fidelity).bind(24, int64_t{m.verified ? 1 : 0});
  s->bind(25, m.work.flops).bind(26, m.work.bytes);
  s->run();
  measurements_[row.id] = db_.last_insert_rowid();
  ++stats_.measurements_added;
}

void RowImporter::add_best(const SourceBest& row) {
  const int64_t gpu = mapped(gpus_, row.gpu_id, "gpu");
  const int64_t kernel = mapped(kernels_, row.kernel_id, "kernel");
  const int64_t candidate = mapped(measurements_, row.measurement_id, "measurement");
  double cand_median = 0;
  std::string cand_name;
  {
    StatementLease q = db_.cached(
        "SELECT outcome, median_us, config_name, gpu_id, kernel_id, shape, dtype, layout FROM measurements"
        " WHERE id = ?1");
    q->bind(1, candidate);
    q->step();
    if (q->text_view(0) != "ok" || q->is_null(1)) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("import: best row for {} {} names measurement {} which is not "
                              "an 'ok' timed measurement",
                              row.shape, to_string(row.dtype), row.measurement_id));
    }
    if (q->int64(3) != gpu || q->int64(4) != kernel || q->text_view(5) != row.shape ||
        q->text_view(6) != to_string(row.dtype) || q->text_view(7) != row.layout) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("import: best row ({}, {}, layout '{}') names measurement {} of another key "
                              "({}, {}, layout '{}')",
                              row.shape, to_string(row.dtype), row.layout, row.measurement_id,
                              q->text_view(5), q->text_view(6), q->text_view(7)));
    }
    cand_median = q->real(1);
    cand_name = q->text(2);
  }
  {
    StatementLease q = db_.cached(
        "SELECT b.measurement_id, m.median_us, m.config_name FROM best b JOIN measurements m"
        " ON m.id = b.measurement_id WHERE b.gpu_id = ?1 AND b.kernel_id = ?2 AND b.shape = ?3"
        " AND b.dtype = ?4 AND b.layout = ?5");
    q->bind(1, gpu).bind(2, kernel).bind(3, row.shape).bind(4, row.dtype).bind(5, row.layout);
    if (q->step()) {
      const int64_t current = q->int64(0);
      const double median = q->real(1);
      // Rule: the lower median wins; an exact tie goes to the config name that sorts first.
      const bool better = cand_median < median || (cand_median == median && cand_name < q->text_view(2));
      if (current == candidate || !better) return;
    }
  }
  StatementLease s = db_.cached(
      "INSERT OR REPLACE INTO best (gpu_id, kernel_id, shape, dtype, layout, measurement_id, updated_at)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  s->bind(1, gpu).bind(2, kernel).bind(3, row.shape).bind(4, row.dtype).bind(5, row.layout);
  s->bind(6, candidate).bind(7, now_iso());
  s->run();
  ++stats_.best_updated;
}

}  // namespace ktune::cache::detail
