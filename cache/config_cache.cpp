#include "cache/config_cache.hpp"

#include <fmt/format.h>

#include "cache/detail/impl.hpp"
#include "cache/detail/lookup_statements.hpp"
#include "cache/detail/schema.hpp"
#include "core/dtype.hpp"
#include "ktune/error.hpp"

namespace ktune::cache {
namespace {

namespace fs = std::filesystem;
using detail::Database;
using detail::StatementLease;
using detail::Transaction;

/// How long a writer waits for another process's write lock before SQLITE_BUSY: 10 s, far above
/// the longest write ktune makes (one sweep step's measurements, milliseconds).
constexpr int kBusyTimeoutMs = 10'000;

void configure(Database& db, bool writable) {
  db.exec(fmt::format("PRAGMA busy_timeout = {}", kBusyTimeoutMs));
  db.exec("PRAGMA foreign_keys = ON");
  // No mmap_size: on the reference box a memory map made the first lookup of a fresh handle slower
  // (page faults; docs/perf/cache-lookup.md), and a mapped file that another process truncates
  // raises SIGBUS instead of an error.
  if (writable) {
    // WAL: readers never wait for a sweep's writes. synchronous=FULL: a commit survives power loss,
    // not only a killed process; commits are one per measured batch, so the fsync is cheap.
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = FULL");
  }
}

}  // namespace

namespace {

/// The read-only handle of an existing file, inspected; throws as ConfigCache::open documents.
std::unique_ptr<ConfigCache::Impl> open_read_only(const fs::path& path) {
  detail::inspect_file_header(path);
  std::unique_ptr<ConfigCache::Impl> impl;
  try {
    impl = std::make_unique<ConfigCache::Impl>(path, ConfigCache::Mode::kReadOnly, Database::Open::kReadOnly);
    configure(impl->db, false);
    impl->version = detail::read_schema_version(impl->db, path);
  } catch (const Error& e) {
    // A WAL database in a folder this process cannot write: SQLite cannot create the -shm file a
    // WAL reader needs. With no -wal file there is nothing uncheckpointed, and nobody can write
    // the file in WAL mode without creating one here, so it may be read as immutable.
    fs::path wal = path;
    wal += "-wal";
    std::error_code ec;
    const bool shm_problem = e.api_code() == "SQLITE_READONLY" || e.api_code() == "SQLITE_CANTOPEN";
    if (!shm_problem || fs::exists(wal, ec)) throw;
    impl = std::make_unique<ConfigCache::Impl>(path, ConfigCache::Mode::kReadOnly,
                                               Database::Open::kReadOnlyImmutable);
    configure(impl->db, false);
    impl->version = detail::read_schema_version(impl->db, path);
  }
  return impl;
}

}  // namespace

int ConfigCache::stored_schema_version(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw Error(ErrorKind::kNotFound, fmt::format("no database at {}", path.string()));
  if (fs::is_directory(path, ec)) {
    throw Error(ErrorKind::kBadInput, fmt::format("{} is a directory, not a database file", path.string()));
  }
  return open_read_only(path)->version;
}

ConfigCache ConfigCache::open(const fs::path& path, Mode mode, WorkModel work_model) {
  if (path.empty()) throw Error(ErrorKind::kBadInput, "empty database path");
  std::error_code ec;
  const bool exists = fs::exists(path, ec);
  if (exists && fs::is_directory(path, ec)) {
    throw Error(ErrorKind::kBadInput, fmt::format("{} is a directory, not a database file", path.string()));
  }

  if (mode == Mode::kReadOnly) {
    if (!exists) throw Error(ErrorKind::kNotFound, fmt::format("no database at {}", path.string()));
    std::unique_ptr<Impl> impl = open_read_only(path);
    if (impl->version == 0) {
      throw Error(ErrorKind::kNotFound, fmt::format("{} holds no ktune data yet", path.string()));
    }
    if (impl->version < kSchemaVersion) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("{} has schema version {}; `ktune cache migrate --db {}` (or any command "
                              "that writes to it) migrates it to {}",
                              path.string(), impl->version, path.string(), kSchemaVersion));
    }
    detail::prepare_lookup_statements(impl->db);
    return ConfigCache(std::move(impl));
  }

  if (exists) {
    // Inspect read-only before anything may write: a foreign or newer file stays byte-for-byte intact.
    (void)open_read_only(path);
  } else if (path.has_parent_path()) {
    fs::create_directories(path.parent_path(), ec);
    if (ec) {
      throw Error(ErrorKind::kRuntime, fmt::format("cannot create the folder {} for the database: {}",
                                                   path.parent_path().string(), ec.message()));
    }
  }
  auto impl = std::make_unique<Impl>(path, mode, Database::Open::kReadWriteCreate);
  if (impl->db.read_only()) {
    throw Error(ErrorKind::kRuntime,
                fmt::format("cannot write the database {}: the file is write-protected", path.string()));
  }
  try {
    configure(impl->db, true);
    // Re-read under this connection: another process may have created the file meanwhile.
    const int version = detail::read_schema_version(impl->db, path);
    if (version < kSchemaVersion) detail::migrate(impl->db, work_model);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kBadInput) throw;
    throw Error(ErrorKind::kRuntime, fmt::format("cannot write the database {}: {}", path.string(), e.what()),
                e.api_code(), e.where());
  }
  impl->version = kSchemaVersion;
  impl->work_model = std::move(work_model);
  detail::prepare_lookup_statements(impl->db);
  return ConfigCache(std::move(impl));
}

ConfigCache::ConfigCache(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ConfigCache::ConfigCache(ConfigCache&&) noexcept = default;
ConfigCache& ConfigCache::operator=(ConfigCache&&) noexcept = default;
ConfigCache::~ConfigCache() = default;

const fs::path& ConfigCache::path() const { return impl_->path; }
int ConfigCache::schema_version() const { return impl_->version; }

int64_t ConfigCache::upsert_gpu(const GpuInfo& gpu) {
  impl_->require_writable("upsert_gpu");
  if (gpu.name.empty()) throw Error(ErrorKind::kBadInput, "GPU name is empty");
  detail::require_json_object(gpu.ceilings_json, "GpuInfo::ceilings_json");
  std::lock_guard lock(impl_->mu);
  Transaction tx(impl_->db);
  StatementLease s = impl_->db.cached(
      "INSERT INTO gpus (name, cc_major, cc_minor, sm_count, memory_bytes, ceilings_json)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
      " ON CONFLICT (name, cc_major, cc_minor, sm_count, memory_bytes) DO UPDATE SET ceilings_json ="
      " CASE WHEN excluded.ceilings_json <> '{}' THEN excluded.ceilings_json ELSE ceilings_json END"
      " RETURNING id");
  s->bind(1, gpu.name).bind(2, gpu.cc_major).bind(3, gpu.cc_minor).bind(4, gpu.sm_count);
  s->bind(5, gpu.memory_bytes).bind(6, gpu.ceilings_json);
  s->step();
  const int64_t id = s->int64(0);
  s->run();
  tx.commit();
  return id;
}

int64_t ConfigCache::upsert_kernel(const KernelInfo& kernel) {
  impl_->require_writable("upsert_kernel");
  if (kernel.name.empty() || kernel.source_hash.empty()) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("kernel name and source hash must not be empty (got '{}', '{}')", kernel.name,
                            kernel.source_hash));
  }
  std::lock_guard lock(impl_->mu);
  Transaction tx(impl_->db);
  // Registering again makes this hash the kernel's most recent one (Lookup without source_hash).
  // Strictly: the stamp is at least 1 ms past the name's latest one, so two registrations within
  // one millisecond still order by call (registered_at ties would fall back to id order, which
  // a re-registration does not change).
  StatementLease s = impl_->db.cached(
      "INSERT INTO kernels (name, source_hash, registered_at) VALUES (?1, ?2, max(?3, COALESCE((SELECT"
      " strftime('%Y-%m-%dT%H:%M:%fZ', MAX(registered_at), '+0.001 seconds') FROM kernels WHERE name = ?1), "
      "'')))"
      " ON CONFLICT (name, source_hash) DO UPDATE SET registered_at = excluded.registered_at RETURNING id");
  s->bind(1, kernel.name).bind(2, kernel.source_hash).bind(3, detail::now_iso());
  s->step();
  const int64_t id = s->int64(0);
  s->run();
  tx.commit();
  return id;
}

int64_t ConfigCache::begin_run(const RunInfo& run) {
  impl_->require_writable("begin_run");
  std::lock_guard lock(impl_->mu);
  Transaction tx(impl_->db);
  StatementLease s = impl_->db.cached(
      "INSERT INTO runs (started_at, host, ktune_version, arguments, driver_version, cuda_version)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  s->bind(1, run.started_at.empty() ? detail::now_iso() : run.started_at).bind(2, run.host);
  s->bind(3, run.ktune_version).bind(4, run.arguments).bind(5, run.driver_version).bind(6, run.cuda_version);
  s->run();
  const int64_t id = impl_->db.last_insert_rowid();
  tx.commit();
  return id;
}

std::vector<int64_t> ConfigCache::record(int64_t run_id, int64_t gpu_id, int64_t kernel_id,
                                         const std::vector<Measurement>& measurements) {
  impl_->require_writable("record");
  for (const Measurement& m : measurements) {
    // A DType outside the enum (a cast integer) has no name to store: "?".
    if (m.shape.empty() || !find_dtype(to_string(m.dtype)) || m.config_name.empty()) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("measurement needs a shape, dtype and config name (got '{}', '{}', '{}')",
                              m.shape, to_string(m.dtype), m.config_name));
    }
    detail::require_json_object(m.config_json, "Measurement::config_json");
    detail::require_json_object(m.counters_json, "Measurement::counters_json");
    detail::require_json_object(m.resources_json, "Measurement::resources_json");
    detail::require_fidelity(m.fidelity, m.config_name);
    detail::require_work(m.work, m.config_name);
  }
  std::lock_guard lock(impl_->mu);
  Transaction tx(impl_->db);
  StatementLease s = impl_->db.cached(detail::kInsertMeasurement);
  const std::string now = detail::now_iso();
  std::vector<int64_t> ids;
  ids.reserve(measurements.size());
  for (const Measurement& m : measurements) {
    s->reset();
    s->bind(1, run_id).bind(2, gpu_id).bind(3, kernel_id).bind(4, m.shape).bind(5, m.dtype);
    s->bind(6, m.config_name).bind(7, m.config_json).bind(8, to_string(m.outcome)).bind(9, m.reason);
    if (m.stats) {
      s->bind(10, m.stats->median_us).bind(11, m.stats->min_us).bind(12, m.stats->mean_us);
      s->bind(13, m.stats->p90_us).bind(14, m.stats->stdev_us).bind(15, m.stats->samples);
    }
    s->bind(16, m.counters_json).bind(17, m.resources_json).bind(18, m.baseline);
    s->bind(19, m.sm_clock_mhz).bind(20, m.temperature_c).bind(21, now).bind(22, m.layout);
    s->bind(23, m.fidelity).bind(24, int64_t{m.verified ? 1 : 0});
    s->bind(25, m.work.flops).bind(26, m.work.bytes);
    try {
      s->run();
    } catch (const Error& e) {
      if (e.api_code() == "SQLITE_CONSTRAINT") {
        throw Error(ErrorKind::kBadInput,
                    fmt::format("record: run {}, GPU {} or kernel {} does not exist ({})", run_id, gpu_id,
                                kernel_id, e.what()),
                    e.api_code(), e.where());
      }
      throw;
    }
    ids.push_back(impl_->db.last_insert_rowid());
  }
  tx.commit();
  return ids;
}

void ConfigCache::set_best(int64_t measurement_id) {
  impl_->require_writable("set_best");
  std::lock_guard lock(impl_->mu);
  Transaction tx(impl_->db);
  {
    StatementLease q = impl_->db.cached("SELECT outcome FROM measurements WHERE id = ?1");
    q->bind(1, measurement_id);
    if (!q->step())
      throw Error(ErrorKind::kNotFound, fmt::format("set_best: no measurement {}", measurement_id));
    if (q->text_view(0) != "ok") {
      throw Error(ErrorKind::kBadInput, fmt::format("set_best: measurement {} has outcome '{}', not 'ok'",
                                                    measurement_id, q->text_view(0)));
    }
  }
  StatementLease s = impl_->db.cached(
      "INSERT OR REPLACE INTO best (gpu_id, kernel_id, shape, dtype, layout, measurement_id, updated_at)"
      " SELECT gpu_id, kernel_id, shape, dtype, layout, id, ?2 FROM measurements WHERE id = ?1");
  s->bind(1, measurement_id).bind(2, detail::now_iso());
  s->run();
  tx.commit();
}

}  // namespace ktune::cache
