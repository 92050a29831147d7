#pragma once
/// The cuBLAS baseline: cuBLASLt's default choice for the problem (the heuristic's first
/// algorithm), measured in the worker as a library call (measure/library_call.hpp) by exactly the
/// code that measures the templates: random inputs (never zeros), a poisoned output, one verified
/// run against the gemm GPU reference, warm-up, rotated inputs or an L2 flush, CUDA-graph batches
/// under the batch threshold, the stopping rule, NVML clock and temperature. CUPTI counters are not
/// read for it. The heuristic is asked in this process (it launches nothing); the device's primary
/// context and cuBLASLt are opened on the first measurement.

#include <map>
#include <memory>
#include <string>

#include "harness/nvrtc_compiler.hpp"
#include "tuner/library/baseline_measurement.hpp"
#include "tuner/library/cublaslt_algorithm_source.hpp"
#include "tuner/loop/candidate_measurer.hpp"

namespace ktune::tuner {

class CublasBaselineMeasurer final : public BaselineMeasurer {
 public:
  /// Touches no GPU until the first measurement. `measurer` measures the baseline (a sweep passes
  /// its own worker; null: a worker of this object's own on `device`).
  explicit CublasBaselineMeasurer(int device, CandidateMeasurer* measurer = nullptr);
  ~CublasBaselineMeasurer() override;
  CublasBaselineMeasurer(const CublasBaselineMeasurer&) = delete;
  CublasBaselineMeasurer& operator=(const CublasBaselineMeasurer&) = delete;

  /// See BaselineMeasurer::measure_cublas. Throws ktune::Error(kNoDevice) without a GPU, a driver
  /// or libcublasLt; every later failure is the result's outcome (launch_error, incorrect, ...).
  measure::CandidateResult measure_cublas(const kernel_templates::Problem& problem,
                                          const measure::TimingOptions& timing, bool verify) override;

 private:
  /// The gemm reference's compile for `problem` (one per dtype and layout).
  const harness::CompileResult& reference(const kernel_templates::Problem& problem);

  int device_;
  CandidateMeasurer* measurer_;
  std::unique_ptr<CandidateMeasurer> own_;
  CublasLtAlgorithmSource algorithms_;
  harness::NvrtcCompiler compiler_;
  std::map<std::string, harness::CompileResult> references_;
};

}  // namespace ktune::tuner
