#include "tuner/library/baseline_measurement.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/cublaslt_layout.hpp"
#include "ktune/error.hpp"
#include "tuner/loop/detail/candidate_preparer.hpp"
#include "tuner/space/spec_work.hpp"

namespace ktune::tuner {

std::optional<std::string> no_cublas_baseline(std::string_view kernel,
                                              const kernel_templates::Problem& problem) {
  if (kernel != "gemm") return fmt::format("no cuBLAS baseline for kernel {}", kernel);
  const ktune::DType d = problem.dtype;
  if (d != ktune::DType::kF16 && d != ktune::DType::kBF16 && d != ktune::DType::kF32) {
    return fmt::format("no cuBLAS baseline for gemm in {} (f16, bf16 and f32 have one)", ktune::to_string(d));
  }
  if (!problem.layout.empty() && !harness::is_library_gemm_layout(problem.layout)) {
    return fmt::format(
        "no cuBLAS baseline for gemm layout '{}' (nt, nn and their +bias forms have one; cuBLASLt has no "
        "SiLU "
        "epilogue)",
        problem.layout);
  }
  for (const char* dim : {"m", "n", "k"}) {
    const auto it =
        std::find_if(problem.dims.begin(), problem.dims.end(), [&](const auto& p) { return p.first == dim; });
    if (it == problem.dims.end()) return fmt::format("no cuBLAS baseline: the gemm shape has no '{}'", dim);
    // cuBLASLt takes 64-bit extents, but ktune's gemm shapes are int32 (core/shape.hpp).
    if (it->second < 1 || it->second > std::numeric_limits<int32_t>::max()) {
      return fmt::format("no cuBLAS baseline: {}={} is out of range", dim, it->second);
    }
  }
  return std::nullopt;
}

std::string cublas_baseline_name(const kernel_templates::Problem& problem) {
  return fmt::format("cublas.{}.{}", ktune::to_string(problem.dtype),
                     problem.layout.empty() ? std::string("nt") : problem.layout);
}

cache::Measurement to_baseline_measurement(const kernel_templates::Problem& problem,
                                           const measure::CandidateResult& result) {
  cache::Measurement m;
  m.shape = problem.shape_text();
  m.dtype = problem.dtype;
  m.layout = problem.layout;
  m.config_name = cublas_baseline_name(problem);
  m.baseline = std::string(kCublasBaseline);
  m.work = spec_work("gemm", problem);  // no_cublas_baseline: only gemm has one
  nlohmann::json config = nlohmann::json::object();
  for (const char* key : {"library", "algorithm"}) {
    if (result.resources.is_object() && result.resources.contains(key))
      config[key] = result.resources.at(key);
  }
  m.config_json = config.dump();
  detail::record_result(m, result, "the cuBLAS baseline");
  if (result.resources.is_object()) m.resources_json = result.resources.dump();
  return m;
}

std::optional<RecordedBaseline> record_cublas_baseline(cache::ConfigCache& db, int64_t run_id, int64_t gpu_id,
                                                       int64_t kernel_id, std::string_view kernel,
                                                       const kernel_templates::Problem& problem,
                                                       const measure::TimingOptions& timing,
                                                       BaselineMeasurer& measurer) {
  if (no_cublas_baseline(kernel, problem)) return std::nullopt;
  measure::CandidateResult result;
  try {
    result = measurer.measure_cublas(problem, timing, true);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kNoDevice) throw;
    result.name = cublas_baseline_name(problem);
    result.outcome = ktune::Outcome::kLaunchError;
    result.reason = e.what();
  }
  RecordedBaseline recorded;
  recorded.measurement = to_baseline_measurement(problem, result);
  recorded.measurement_id = db.record(run_id, gpu_id, kernel_id, {recorded.measurement}).at(0);
  return recorded;
}

}  // namespace ktune::tuner
