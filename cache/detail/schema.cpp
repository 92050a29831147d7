#include "cache/detail/schema.hpp"

#include <array>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "cache/config_cache.hpp"
#include "cache/detail/stored_work.hpp"
#include "ktune/error.hpp"

namespace ktune::cache::detail {
namespace {

/// Schema v1 (docs/schema.md). Times are ISO-8601 UTC text, durations microseconds (REAL).
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE gpus (
  id            INTEGER PRIMARY KEY,
  name          TEXT    NOT NULL,
  cc_major      INTEGER NOT NULL,
  cc_minor      INTEGER NOT NULL,
  sm_count      INTEGER NOT NULL,
  memory_bytes  INTEGER NOT NULL,
  ceilings_json TEXT    NOT NULL DEFAULT '{}',
  UNIQUE (name, cc_major, cc_minor, sm_count, memory_bytes)
);
CREATE TABLE kernels (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL,
  source_hash   TEXT NOT NULL,
  registered_at TEXT NOT NULL,
  UNIQUE (name, source_hash)
);
CREATE INDEX kernels_recent ON kernels (name, registered_at);
CREATE TABLE runs (
  id             INTEGER PRIMARY KEY,
  started_at     TEXT NOT NULL,
  host           TEXT NOT NULL DEFAULT '',
  ktune_version  TEXT NOT NULL DEFAULT '',
  arguments      TEXT NOT NULL DEFAULT '',
  driver_version TEXT NOT NULL DEFAULT '',
  cuda_version   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX runs_identity ON runs (started_at, host);
CREATE TABLE measurements (
  id             INTEGER PRIMARY KEY,
  run_id         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  gpu_id         INTEGER NOT NULL REFERENCES gpus (id) ON DELETE CASCADE,
  kernel_id      INTEGER NOT NULL REFERENCES kernels (id) ON DELETE CASCADE,
  shape          TEXT    NOT NULL,
  dtype          TEXT    NOT NULL,
  layout         TEXT    NOT NULL DEFAULT '',
  config_name    TEXT    NOT NULL,
  config_json    TEXT    NOT NULL DEFAULT '{}',
  outcome        TEXT    NOT NULL CHECK (outcome IN ('ok', 'compile_error', 'exceeds_limits',
                   'launch_error', 'incorrect', 'timeout', 'crashed', 'skipped')),
  reason         TEXT    NOT NULL DEFAULT '',
  median_us      REAL,
  min_us         REAL,
  mean_us        REAL,
  p90_us         REAL,
  stdev_us       REAL,
  samples        INTEGER,
  counters_json  TEXT    NOT NULL DEFAULT '{}',
  resources_json TEXT    NOT NULL DEFAULT '{}',
  baseline       TEXT    NOT NULL DEFAULT '',
  sm_clock_mhz   REAL,
  temperature_c  REAL,
  measured_at    TEXT    NOT NULL,
  fidelity       REAL    NOT NULL DEFAULT 1.0 CHECK (fidelity > 0)
);
CREATE INDEX measurements_key ON measurements (gpu_id, kernel_id, shape, dtype, layout, config_name);
CREATE INDEX measurements_run ON measurements (run_id);
CREATE INDEX measurements_kernel ON measurements (kernel_id);
CREATE TABLE best (
  gpu_id         INTEGER NOT NULL REFERENCES gpus (id) ON DELETE CASCADE,
  kernel_id      INTEGER NOT NULL REFERENCES kernels (id) ON DELETE CASCADE,
  shape          TEXT    NOT NULL,
  dtype          TEXT    NOT NULL,
  layout         TEXT    NOT NULL DEFAULT '',
  measurement_id INTEGER NOT NULL REFERENCES measurements (id) ON DELETE CASCADE,
  updated_at     TEXT    NOT NULL,
  PRIMARY KEY (gpu_id, kernel_id, shape, dtype, layout)
) WITHOUT ROWID;
CREATE INDEX best_kernel_key ON best (kernel_id, dtype, layout, shape);
CREATE INDEX best_measurement ON best (measurement_id);
CREATE TABLE compile_cache (
  key                TEXT PRIMARY KEY,
  cubin              BLOB NOT NULL,
  log                TEXT NOT NULL DEFAULT '',
  lowered_names_json TEXT NOT NULL DEFAULT '{}',
  resources_json     TEXT NOT NULL DEFAULT '{}',
  compile_ms         REAL NOT NULL DEFAULT 0,
  kernel_name        TEXT NOT NULL DEFAULT '',
  source_hash        TEXT NOT NULL DEFAULT '',
  created_at         TEXT NOT NULL,
  last_used_at       TEXT NOT NULL
);
CREATE INDEX compile_cache_kernel ON compile_cache (kernel_name, source_hash);
)sql";

/// Schema v2: measurements.verified, 0 for a result no reference checked (a user kernel whose
/// description says `verify = false`, docs/byo.md, D4); every older row was verified.
constexpr const char* kSchemaV2 = R"sql(
ALTER TABLE measurements ADD COLUMN verified INTEGER NOT NULL DEFAULT 1 CHECK (verified IN (0, 1));
)sql";

/// Schema v3: the tuning jobs of `ktune serve` (docs/schema.md "jobs"), durable across restarts.
constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE jobs (
  id            INTEGER PRIMARY KEY,
  state         TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  lane          TEXT    NOT NULL,
  request_json  TEXT    NOT NULL,
  progress_json TEXT    NOT NULL DEFAULT '{}',
  error         TEXT    NOT NULL DEFAULT '',
  created_at    TEXT    NOT NULL,
  started_at    TEXT,
  finished_at   TEXT
);
CREATE INDEX jobs_queue ON jobs (state, lane, id);
)sql";

/// Schema v4: measurements.work_flops and .work_bytes, the work of one launch (KernelSpec::work) that
/// reports derive TFLOP/s, GB/s and the roofline from. Older rows of user kernels carried it in their
/// resources ("work": {"flops", "bytes"}); it moves here. migrate() then asks the caller's WorkModel
/// for the rest (stored_work.hpp); what no one knows stays NULL.
constexpr const char* kSchemaV4 = R"sql(
ALTER TABLE measurements ADD COLUMN work_flops REAL CHECK (work_flops IS NULL OR work_flops > 0);
ALTER TABLE measurements ADD COLUMN work_bytes REAL CHECK (work_bytes IS NULL OR work_bytes > 0);
UPDATE measurements SET
  work_flops = CASE WHEN json_type(resources_json, '$.work.flops') IN ('integer', 'real')
                     AND json_extract(resources_json, '$.work.flops') > 0
                    THEN json_extract(resources_json, '$.work.flops') END,
  work_bytes = CASE WHEN json_type(resources_json, '$.work.bytes') IN ('integer', 'real')
                     AND json_extract(resources_json, '$.work.bytes') > 0
                    THEN json_extract(resources_json, '$.work.bytes') END
WHERE CASE WHEN json_valid(resources_json) THEN json_type(resources_json, '$.work') END = 'object';
)sql";

/// kMigrations[i] takes a database from version i to version i+1. Append only: a released
/// migration is never edited, so every old database reaches the same schema.
constexpr std::array<const char*, kSchemaVersion> kMigrations = {kSchemaV1, kSchemaV2, kSchemaV3, kSchemaV4};

/// Tables and columns that verify() expects in a version-kSchemaVersion database.
const std::map<std::string, std::vector<std::string>>& expected_columns() {
  static const std::map<std::string, std::vector<std::string>> kColumns = {
      {"gpus", {"id", "name", "cc_major", "cc_minor", "sm_count", "memory_bytes", "ceilings_json"}},
      {"kernels", {"id", "name", "source_hash", "registered_at"}},
      {"runs", {"id", "started_at", "host", "ktune_version", "arguments", "driver_version", "cuda_version"}},
      {"measurements", {"id",           "run_id",        "gpu_id",        "kernel_id",      "shape",
                        "dtype",        "layout",        "config_name",   "config_json",    "outcome",
                        "reason",       "median_us",     "min_us",        "mean_us",        "p90_us",
                        "stdev_us",     "samples",       "counters_json", "resources_json", "baseline",
                        "sm_clock_mhz", "temperature_c", "measured_at",   "fidelity",       "verified",
                        "work_flops",   "work_bytes"}},
      {"best", {"gpu_id", "kernel_id", "shape", "dtype", "layout", "measurement_id", "updated_at"}},
      {"compile_cache",
       {"key", "cubin", "log", "lowered_names_json", "resources_json", "compile_ms", "kernel_name",
        "source_hash", "created_at", "last_used_at"}},
      {"jobs",
       {"id", "state", "lane", "request_json", "progress_json", "error", "created_at", "started_at",
        "finished_at"}},
  };
  return kColumns;
}

[[noreturn]] void bad_file(const std::filesystem::path& path, const std::string& why) {
  throw Error(ErrorKind::kBadInput, fmt::format("{}: {}; the file was left unchanged", path.string(), why));
}

uint32_t be32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

void inspect_file_header(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (ec) throw Error(ErrorKind::kRuntime, fmt::format("{}: cannot stat: {}", path.string(), ec.message()));
  // A device, pipe or socket (`--db /dev/null`) has no size to read: bad input, not a failure.
  if (!std::filesystem::is_regular_file(status))
    bad_file(path, "not a regular file (a device, pipe, socket or folder), so not a ktune database");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(ErrorKind::kRuntime, fmt::format("{}: cannot stat: {}", path.string(), ec.message()));
  if (size == 0) return;
  // SQLite file format: a 100-byte header starting with "SQLite format 3\0".
  constexpr size_t kHeader = 100;
  std::array<unsigned char, kHeader> h{};
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kRuntime, fmt::format("{}: cannot read the file", path.string()));
  in.read(reinterpret_cast<char*>(h.data()), kHeader);
  const auto got = static_cast<size_t>(in.gcount());
  static constexpr char kMagic[] = "SQLite format 3";  // 16 bytes with its NUL
  if (got < sizeof kMagic || !std::equal(kMagic, kMagic + sizeof kMagic, h.begin())) {
    bad_file(path, "not an SQLite database (no SQLite header); is this the right file?");
  }
  if (got < kHeader)
    bad_file(path, fmt::format("truncated database ({} bytes, shorter than its header)", size));
  uint32_t page_size = (uint32_t{h[16]} << 8) | h[17];
  if (page_size == 1) page_size = 65536;  // the format stores 65536 as 1
  const uint32_t change_counter = be32(&h[24]);
  const uint32_t pages = be32(&h[28]);
  const uint32_t valid_for = be32(&h[92]);
  // The in-header page count is valid only when "version-valid-for" matches the change counter.
  // With a live WAL file the main file may lag behind; SQLite's own recovery handles that case.
  std::error_code wal_ec;
  std::filesystem::path wal = path;
  wal += "-wal";
  const bool live_wal = std::filesystem::exists(wal, wal_ec) && std::filesystem::file_size(wal, wal_ec) > 0;
  if (!live_wal && page_size >= 512 && pages > 0 && valid_for == change_counter &&
      size < uint64_t{pages} * page_size) {
    bad_file(path, fmt::format("truncated database ({} bytes, its header says {} pages of {} bytes)", size,
                               pages, page_size));
  }
}

void create_at_version(Database& db, int version) {
  if (version < 1 || version > kSchemaVersion)
    throw Error(ErrorKind::kBadInput, fmt::format("no schema version {}", version));
  Transaction tx(db);
  for (size_t v = 0; v < static_cast<size_t>(version); ++v) db.exec(kMigrations[v]);
  db.exec(fmt::format("PRAGMA application_id = {}", kApplicationId));
  db.exec(fmt::format("PRAGMA user_version = {}", version));
  tx.commit();
}

int read_schema_version(Database& db, const std::filesystem::path& path) {
  int64_t app = 0;
  int64_t version = 0;
  int64_t tables = 0;
  try {
    app = db.pragma_int("application_id");
    version = db.pragma_int("user_version");
    StatementLease s = db.cached("SELECT count(*) FROM sqlite_schema WHERE type = 'table'");
    if (s->step()) tables = s->int64(0);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kBadInput)
      bad_file(path, fmt::format("not a readable SQLite database ({})", e.what()));
    throw;
  }
  if (tables == 0 && app == 0 && version == 0) return 0;  // an empty database: ours to initialise
  if (app != kApplicationId) {
    bad_file(path,
             fmt::format("an SQLite database, but not a ktune one (application_id {:#x}, expected {:#x})",
                         app, kApplicationId));
  }
  if (version > kSchemaVersion) {
    bad_file(path,
             fmt::format("schema version {} is newer than this ktune understands ({}); use a newer ktune",
                         version, kSchemaVersion));
  }
  if (version >= 1) {
    // Version 1 gained measurements.layout and .fidelity (and best.layout) before its release; a file
    // written by a build from before that cannot be read by this one's queries.
    StatementLease s = db.cached(
        "SELECT count(*), coalesce(sum(name IN ('layout', 'fidelity')), 0)"
        " FROM pragma_table_info('measurements')");
    if (s->step() && s->int64(0) > 0 && s->int64(1) < 2) {
      bad_file(path,
               "written by a pre-release ktune build (schema 1 without the layout and fidelity columns); "
               "delete it and tune again");
    }
  }
  return static_cast<int>(version);
}

void migrate(Database& db, const WorkModel& work_model) {
  Transaction tx(db);
  const auto version = db.pragma_int("user_version");
  if (version >= kSchemaVersion) return;  // another process did it while we waited for the lock
  for (auto v = static_cast<size_t>(version); v < kMigrations.size(); ++v) db.exec(kMigrations[v]);
  if (version >= 1 && version < 4) fill_missing_work(db, work_model);  // rows from before the columns
  db.exec(fmt::format("PRAGMA application_id = {}", kApplicationId));
  db.exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion));
  tx.commit();
}

std::vector<std::string> check_structure(Database& db) {
  std::vector<std::string> problems;
  const auto app = db.pragma_int("application_id");
  if (app != kApplicationId)
    problems.push_back(fmt::format("application_id is {:#x}, expected {:#x}", app, kApplicationId));
  const auto version = db.pragma_int("user_version");
  if (version != kSchemaVersion) {
    problems.push_back(fmt::format("schema version is {}, expected {}", version, kSchemaVersion));
  }
  for (const auto& [table, columns] : expected_columns()) {
    std::set<std::string> have;
    StatementLease s = db.cached("SELECT name FROM pragma_table_info(?1)");
    s->bind(1, table);
    while (s->step()) have.insert(s->text(0));
    if (have.empty()) {
      problems.push_back(fmt::format("table '{}' is missing", table));
      continue;
    }
    for (const auto& c : columns) {
      if (have.count(c) == 0) problems.push_back(fmt::format("table '{}' lacks column '{}'", table, c));
    }
  }
  return problems;
}

}  // namespace ktune::cache::detail
