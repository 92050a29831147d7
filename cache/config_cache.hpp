#pragma once
/// The ConfigCache: ktune's SQLite database, the source of truth (docs/design.md D7). It holds every
/// measurement of every run, the winner per key (GPU, kernel, shape, dtype, layout), the GPUs with their
/// measured ceilings, and the compile cache. WAL mode, a busy timeout, one transaction a write,
/// schema version with forward migrations. docs/schema.md documents it as a stable interface.
/// A dtype is a DType everywhere in this API and its name (to_string) in the database; a stored
/// name this build does not know is refused when read (ktune::Error(kBadInput) naming it).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/outcome.hpp"
#include "ktune/dtype.hpp"

namespace ktune::cache {

/// The schema version this build writes; a database with a newer one is refused unchanged.
inline constexpr int kSchemaVersion = 4;

/// A GPU model. The key is (name, compute capability, SM count, memory size): a result holds for
/// every card of the model, so the UUID is not part of it.
struct GpuInfo {
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int64_t memory_bytes = 0;
  /// Measured ceilings (`ktune devices --calibrate`) as a JSON object, e.g.
  /// {"copy_gbps":4280,"bf16_tflops":724}; "{}" when never measured.
  std::string ceilings_json = "{}";
};

/// A kernel template: its name and the hash of its source (a changed template makes old rows stale).
struct KernelInfo {
  std::string name;
  std::string source_hash;
};

/// One invocation of ktune that wrote measurements.
struct RunInfo {
  std::string started_at;  ///< ISO-8601 UTC; filled with the current time when empty
  std::string host;
  std::string ktune_version;
  std::string arguments;  ///< the command line
  std::string driver_version;
  std::string cuda_version;
};

/// Timing statistics of one measurement, in microseconds.
struct Stats {
  double median_us = 0;
  double min_us = 0;
  double mean_us = 0;
  double p90_us = 0;
  double stdev_us = 0;
  int64_t samples = 0;
};

/// The work of one launch of a kernel at one shape, dtype and layout: what TFLOP/s, GB/s and the
/// roofline of a measurement are computed from. The kernel's spec is the one source of these numbers
/// (KernelSpec::work); the cache stores them with each measurement and knows no kernels itself.
struct Work {
  std::optional<double> flops;  ///< floating-point operations (a multiply-add counts 2); absent: unknown
  std::optional<double> bytes;  ///< minimum DRAM bytes (each input read once, each output written once)

  bool operator==(const Work&) const = default;
};

/// What a WorkModel is asked: a key's kernel name, canonical shape text, dtype and layout.
struct WorkKey {
  std::string_view kernel;
  std::string_view shape;
  DType dtype = DType::kF32;
  std::string_view layout;
};

/// Answers the work of a key from the kernels this process knows (tuner::spec_work_model). The
/// cache calls it where a measurement arrives without work: the migration of older rows to schema 4
/// and the import of an older export. Empty fields where the kernel is unknown. A stored row whose
/// dtype this build does not know is not asked about: its work stays unknown.
using WorkModel = std::function<Work(const WorkKey&)>;

/// One measured (or failed) config for one shape, dtype and layout.
struct Measurement {
  std::string shape;          ///< canonical shape text
  DType dtype = DType::kF32;  ///< stored as its name: "f32", "f16", "bf16", "fp8e4m3", ...
  /// The kernel's layout/mode text, part of the key: "nt", "nn", "nt+bias+silu" for gemm; "" for a
  /// kernel that has none.
  std::string layout;
  std::string config_name;         ///< canonical config name, e.g. gemm.bf16.nt.128x128x32.w2x2.s3.sk1
  std::string config_json = "{}";  ///< the config's parameters as a JSON object
  Outcome outcome = Outcome::kOk;
  std::string reason;                   ///< why, for any outcome but ok
  std::optional<Stats> stats;           ///< present when timed
  std::string counters_json = "{}";     ///< CUPTI counters (JSON object), "{}" when none
  std::string resources_json = "{}";    ///< registers, shared memory, spills (JSON object)
  std::string baseline;                 ///< "" for a candidate; "cublas", "default", ... for a baseline
  std::optional<double> sm_clock_mhz;   ///< seen during timing (NVML), absent when unknown
  std::optional<double> temperature_c;  ///< seen during timing (NVML), absent when unknown
  /// The timing effort the measurement was made with: 1.0 is the full protocol, less is a cheaper
  /// pass (successive halving times every config at low fidelity first). Finite and > 0.
  double fidelity = 1.0;
  /// false when no reference checked the result: a user kernel described with `verify = false`
  /// (docs/byo.md). Such results are shown as unverified everywhere (D4).
  bool verified = true;
  /// The work of one launch (KernelSpec::work), for the derived throughput and roofline; fields
  /// absent when the kernel has no work model. Each present value is finite and > 0.
  Work work;
};

/// A measurement as stored, with its row ids and the names of what it belongs to.
struct StoredMeasurement {
  int64_t id = 0;
  int64_t run_id = 0;
  std::string run_started_at;
  GpuInfo gpu;
  KernelInfo kernel;
  Measurement m;
  std::string measured_at;  ///< ISO-8601 UTC
};

/// A lookup of the best config. `layout` comes last so that positional initializers written
/// before it existed keep their meaning (layout "": a kernel without layouts).
struct Lookup {
  std::string gpu_name;  ///< matched exactly against GpuInfo::name
  std::string kernel;
  std::string shape;  ///< canonical
  DType dtype = DType::kF32;
  std::optional<std::string> source_hash;  ///< when absent, the kernel's most recent hash
  std::string layout;                      ///< part of the key, matched exactly ("" = none)
};

/// The answer to a Lookup.
struct BestConfig {
  std::string gpu_name;
  KernelInfo kernel;
  std::string shape;        ///< the shape asked for
  std::string tuned_shape;  ///< the shape the answer was tuned for (differs when fallback)
  DType dtype = DType::kF32;
  std::string layout;  ///< "" for a kernel without layouts
  std::string config_name;
  std::string config_json;
  Stats stats;
  int64_t measurement_id = 0;
  bool fallback = false;  ///< true when tuned_shape is the nearest tuned shape, not the one asked for
  bool verified = true;   ///< false: the winner was never checked against a reference (verify = false)
  /// {"gpu":..,"kernel":..,"source_hash":..,"shape":..,"tuned_shape":..,"dtype":..,"layout":..,
  ///  "config_name":..,"config":{..},"median_us":..,"fallback":bool,...}
  std::string to_json() const;
};

/// Filter for listings and reports; empty (or absent) fields match everything.
struct Filter {
  std::string gpu_name;
  std::string kernel;
  std::optional<DType> dtype;
  std::optional<int64_t> run_id;
  std::optional<std::string> layout;  ///< absent: every layout; "" matches only rows without one
};

/// The latest stored result of one config for one key (ConfigCache::results_for): what a restarted
/// sweep needs to answer an already-measured config from the cache instead of measuring it again.
struct StoredResult {
  std::string config_name;
  int64_t measurement_id = 0;
  Outcome outcome = Outcome::kOk;
  std::string reason;
  std::optional<Stats> stats;  ///< present when timed
  double fidelity = 1.0;
  std::string baseline;  ///< "" for a candidate
  std::string resources_json = "{}";
  /// Whether this result answers a request at `requested_fidelity`: an ok result measured at the same
  /// or a higher fidelity; a failure (compile_error ... crashed) at any fidelity, since more timing
  /// does not change it. `skipped` never answers: the config was not measured.
  bool answers(double requested_fidelity) const;
};

struct MergeStats {
  int64_t measurements_added = 0;
  int64_t measurements_skipped = 0;  ///< already present (same key, config, fidelity and run)
  int64_t best_updated = 0;
};

struct PruneStats {
  int64_t kernels_removed = 0;
  int64_t measurements_removed = 0;
  int64_t compile_entries_removed = 0;
};

struct VerifyReport {
  bool ok = false;
  std::vector<std::string> problems;  ///< empty when ok
};

/// A compiled artifact in the compile cache, keyed by a hash of source, options, arch and NVRTC version.
struct CompiledArtifact {
  std::string key;
  std::string cubin;  ///< binary bytes
  std::string log;
  std::string lowered_names_json = "{}";  ///< name expression -> lowered name
  std::string resources_json = "{}";
  double compile_ms = 0;
  /// Optional: the kernel template this artifact was compiled from, so that prune() can drop the
  /// artifacts of stale templates. Empty when unknown (then only the key identifies it).
  std::string kernel_name;
  std::string source_hash;
};

/// The database path: `flag` when given, else $KTUNE_DB, else $XDG_CACHE_HOME/ktune/ktune.db,
/// else ~/.cache/ktune/ktune.db.
std::filesystem::path resolve_db_path(const std::optional<std::string>& flag);

/// One handle on a database. Safe to share between threads: calls are serialized on the handle;
/// open one handle per thread for parallel reads. Any number of processes may open the same file.
class ConfigCache {
 public:
  enum class Mode { kReadWrite, kReadOnly };

  /// Opens (read-write: creating and migrating as needed) the database at `path`.
  /// `work_model`, when given, fills the work of measurements that arrive without it: rows migrated
  /// from a schema before 4 and rows imported from an older export (without it they stay unknown).
  /// Throws ktune::Error: kBadInput for a file that is not a ktune database, is truncated or has a
  /// newer schema (the file is left unchanged); kRuntime for a path that cannot be created or
  /// written; kNotFound for a read-only open of a missing file.
  static ConfigCache open(const std::filesystem::path& path, Mode mode = Mode::kReadWrite,
                          WorkModel work_model = {});

  /// The schema version the file at `path` holds now, read without changing it (0: a database
  /// with no ktune data yet). Throws as a read-only open(): kNotFound for a missing file, kBadInput
  /// for a file that is not a ktune database.
  static int stored_schema_version(const std::filesystem::path& path);

  ConfigCache(ConfigCache&&) noexcept;
  ConfigCache& operator=(ConfigCache&&) noexcept;
  ~ConfigCache();

  const std::filesystem::path& path() const;
  int schema_version() const;

  // ---- writing (each call is one transaction) ----
  int64_t upsert_gpu(const GpuInfo& gpu);  ///< returns the gpu id; updates ceilings when non-empty
  int64_t upsert_kernel(const KernelInfo& kernel);
  int64_t begin_run(const RunInfo& run);
  /// Records measurements of one run for one GPU and kernel, all in one transaction.
  std::vector<int64_t> record(int64_t run_id, int64_t gpu_id, int64_t kernel_id,
                              const std::vector<Measurement>& measurements);
  /// Names measurement `measurement_id` the winner for its (GPU, kernel, shape, dtype, layout).
  void set_best(int64_t measurement_id);

  // ---- reading ----
  /// Best config for the key; with `allow_fallback`, the nearest tuned shape of the same kernel,
  /// dtype, layout and GPU when the shape itself was not tuned (flagged in the answer). Throws
  /// ktune::Error(kBadInput) when a fallback is needed and `lookup.shape` does not parse.
  /// Costs one SQLite query (microseconds); for lookups on a hot path, load a BestIndex.
  std::optional<BestConfig> best(const Lookup& lookup, bool allow_fallback = true) const;
  /// Every best row matching `filter` (all template hashes), ordered by GPU, kernel, hash, dtype,
  /// layout, shape.
  std::vector<BestConfig> list_best(const Filter& filter = {}) const;
  /// The kernel's most recently registered template hash (the one a Lookup without source_hash
  /// uses); nullopt for an unknown kernel.
  std::optional<std::string> current_source_hash(std::string_view kernel) const;
  /// Calls `fn` for every measurement matching `filter`, in id order (streams; no big vector).
  /// `fn` must not call back into this ConfigCache (the handle is locked while it streams).
  void for_each_measurement(const Filter& filter,
                            const std::function<void(const StoredMeasurement&)>& fn) const;
  /// Whether a measurement exists for (gpu, kernel, shape, dtype, layout, config_name).
  bool has_measurement(int64_t gpu_id, int64_t kernel_id, std::string_view shape, DType dtype,
                       std::string_view layout, std::string_view config_name) const;
  /// has_measurement() for layout "" (a kernel without layouts).
  bool has_measurement(int64_t gpu_id, int64_t kernel_id, std::string_view shape, DType dtype,
                       std::string_view config_name) const {
    return has_measurement(gpu_id, kernel_id, shape, dtype, std::string_view(), config_name);
  }
  /// Resume support: for each config name measured for the key (baselines included), its latest
  /// measurement (greatest measured_at, then greatest id), ordered by config name. One indexed query.
  std::vector<StoredResult> results_for(int64_t gpu_id, int64_t kernel_id, std::string_view shape,
                                        DType dtype, std::string_view layout) const;
  std::vector<GpuInfo> gpus() const;
  /// The distinct GPU names, sorted: what a lookup's `gpu` names. gpus() may hold several rows of
  /// one name (one a compute capability, SM count and memory size seen under it).
  std::vector<std::string> gpu_names() const;
  /// The distinct kernel names the database holds (every registered version of each), sorted.
  std::vector<std::string> kernel_names() const;
  std::vector<RunInfo> runs() const;

  // ---- compile cache ----
  std::optional<CompiledArtifact> find_compiled(std::string_view key) const;
  void store_compiled(const CompiledArtifact& artifact);

  // ---- maintenance ----
  /// Writes every row (GPUs, kernels, runs, measurements, best) as one JSON document
  /// (docs/export-format.md). The compile cache is not exported.
  void export_json(const std::filesystem::path& out) const;
  /// Imports an export; rows already present are skipped (same rule as merge).
  MergeStats import_json(const std::filesystem::path& in);
  /// Merges another ktune database into this one, in one transaction. Duplicate rule: a
  /// measurement already present (same GPU, kernel hash, shape, dtype, layout, config name,
  /// baseline, fidelity, run start time and host, and measured_at) is skipped; for each key the
  /// best is re-chosen as the lowest median among the two databases' best rows (exact tie: the
  /// config name that sorts first). docs/export-format.md states the full rule.
  MergeStats merge(const std::filesystem::path& other);
  /// Removes kernels whose name is in `current_hashes` with a different hash (stale templates),
  /// with their measurements and best rows.
  PruneStats prune(const std::map<std::string, std::string>& current_hashes);
  /// PRAGMA integrity_check plus a check of tables, columns and schema version.
  VerifyReport verify() const;

  struct Impl;

 private:
  explicit ConfigCache(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ktune::cache
