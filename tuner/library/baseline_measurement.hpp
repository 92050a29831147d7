#pragma once
/// Baselines a tuned kernel is compared with: for the gemm family, cuBLASLt on the same
/// problem, timed with the same protocol (measure::TimingOptions) in the same run, verified against
/// the same GPU reference, and stored in the ConfigCache as a measurement whose `baseline` is
/// "cublas". Baselines never compete for `best` (set_best is only called for candidates, and the
/// tuning loop's stored results leave them out); reports divide the baseline's median by the
/// winner's to show the speed-up per shape.
///
/// The measuring is behind BaselineMeasurer so that the tuning loop and its tests run without a GPU;
/// the real one is CublasBaselineMeasurer (tuner/library/cublas_baseline_measurer.hpp).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cache/config_cache.hpp"
#include "kernel_templates/kernel_spec.hpp"
#include "measure/candidate.hpp"
#include "measure/timing_options.hpp"

namespace ktune::tuner {

/// The `baseline` value of a cuBLAS measurement in the cache.
inline constexpr std::string_view kCublasBaseline = "cublas";

/// Why (kernel, problem) has no cuBLAS baseline, or nullopt when it has one: kernel "gemm", dtype
/// f16, bf16 or f32, layout "nt", "nn" or "" (= nt), no epilogue (cuBLASLt is asked for the plain
/// product only), every dimension in [1, 2^31-1].
std::optional<std::string> no_cublas_baseline(std::string_view kernel,
                                              const kernel_templates::Problem& problem);

/// The config name of the cuBLAS baseline row, e.g. `cublas.bf16.nt`.
std::string cublas_baseline_name(const kernel_templates::Problem& problem);

/// Measures baselines. Implementations are used from one thread.
class BaselineMeasurer {
 public:
  virtual ~BaselineMeasurer() = default;
  /// cuBLASLt on `problem` (a gemm problem, see no_cublas_baseline) with `timing`; verified against
  /// the gemm GPU reference unless `verify` is false. Always returns a result (a failure is an
  /// outcome with its reason), named cublas_baseline_name(problem); throws ktune::Error(kNoDevice)
  /// only when no GPU or no cuBLASLt can be used at all.
  virtual measure::CandidateResult measure_cublas(const kernel_templates::Problem& problem,
                                                  const measure::TimingOptions& timing, bool verify) = 0;
};

/// `result` as the cache row of a cuBLAS baseline for `problem` (shape = problem.shape_text(),
/// dtype, layout, config_name = cublas_baseline_name, baseline "cublas", config_json with the
/// library and algorithm the result's resources name).
cache::Measurement to_baseline_measurement(const kernel_templates::Problem& problem,
                                           const measure::CandidateResult& result);

/// A baseline as recorded: its row id and the row.
struct RecordedBaseline {
  int64_t measurement_id = 0;
  cache::Measurement measurement;
};

/// The tuning loop's call, once per tuned key: for a key with a cuBLAS baseline, measures it with
/// `measurer` and records the row in run `run_id` (one transaction); returns what it recorded.
/// Returns nullopt, measuring nothing, when the key has none (an operator kernel, an epilogue
/// layout, an fp8 dtype). A failed measurement is recorded with its outcome and reason; only
/// ktune::Error(kNoDevice) from the measurer and database errors escape.
std::optional<RecordedBaseline> record_cublas_baseline(cache::ConfigCache& db, int64_t run_id, int64_t gpu_id,
                                                       int64_t kernel_id, std::string_view kernel,
                                                       const kernel_templates::Problem& problem,
                                                       const measure::TimingOptions& timing,
                                                       BaselineMeasurer& measurer);

}  // namespace ktune::tuner
