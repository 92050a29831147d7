#pragma once
/// Copies rows from another source (a second database or an export file) into a database, under
/// the duplicate rule of ConfigCache::merge. Ids of the source are local to it and are remapped.
/// The caller holds the write transaction; rows must come in dependency order (GPUs, kernels and
/// runs before the measurements that name them, measurements before the best rows).

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "cache/config_cache.hpp"
#include "cache/detail/sqlite_db.hpp"

namespace ktune::cache::detail {

struct SourceKernel {
  int64_t id = 0;
  KernelInfo info;
  std::string registered_at;
};

struct SourceRun {
  int64_t id = 0;
  RunInfo info;
};

struct SourceMeasurement {
  int64_t id = 0;
  int64_t run_id = 0;
  int64_t gpu_id = 0;
  int64_t kernel_id = 0;
  Measurement m;
  std::string measured_at;
};

struct SourceBest {
  int64_t gpu_id = 0;
  int64_t kernel_id = 0;
  std::string shape;
  DType dtype = DType::kF32;
  std::string layout;
  int64_t measurement_id = 0;
};

class RowImporter {
 public:
  /// `work_model` (may be empty) fills the work of measurements that arrive without any.
  RowImporter(Database& dest, WorkModel work_model) : db_(dest), work_model_(std::move(work_model)) {}

  void add_gpu(int64_t source_id, const GpuInfo& gpu);
  void add_kernel(const SourceKernel& kernel);
  void add_run(const SourceRun& run);
  void add_measurement(const SourceMeasurement& row);
  void add_best(const SourceBest& row);

  const MergeStats& stats() const { return stats_; }

 private:
  int64_t mapped(const std::unordered_map<int64_t, int64_t>& map, int64_t id, const char* what) const;

  Database& db_;
  WorkModel work_model_;
  std::unordered_map<int64_t, int64_t> gpus_, kernels_, runs_, measurements_;
  std::unordered_map<int64_t, std::string> kernel_names_;  ///< by source id
  std::unordered_set<int64_t> new_runs_;                   ///< destination ids of runs this import created
  MergeStats stats_;
};

}  // namespace ktune::cache::detail
