#pragma once
/// The cuBLAS baseline measured in this process (not in a worker: cuBLASLt is a library call, not a
/// cubin the worker could load). It follows the worker's protocol step for step with the same
/// harness::TimingOptions (measure/worker_measurer.hpp): random inputs (never zeros), a poisoned
/// output, one verified run against the gemm GPU reference (f32 accumulation), warm-up, an L2 flush
/// or buffer rotation before every sample, CUDA-graph batches under the batch threshold, the
/// stopping rule, NVML clock and temperature. CUPTI counters and the Activity timer are not run for
/// it. The device's primary context, the stream, cuBLASLt and the reference module are set up on
/// the first measurement and kept.

#include <memory>

#include "tuner/baseline_measurement.hpp"

namespace ktune::tuner {

class CublasBaselineMeasurer final : public BaselineMeasurer {
 public:
  /// Touches no GPU until the first measurement.
  explicit CublasBaselineMeasurer(int device);
  ~CublasBaselineMeasurer() override;
  CublasBaselineMeasurer(const CublasBaselineMeasurer&) = delete;
  CublasBaselineMeasurer& operator=(const CublasBaselineMeasurer&) = delete;

  /// See BaselineMeasurer::measure_cublas. Throws ktune::Error(kNoDevice) without a GPU, a driver
  /// or libcublasLt; every later failure is the result's outcome (launch_error, incorrect, ...).
  harness::CandidateResult measure_cublas(const kernel_templates::Problem& problem,
                                          const harness::TimingOptions& timing, bool verify) override;

 private:
  struct State;
  State& state();

  int device_;
  std::unique_ptr<State> state_;
};

}  // namespace ktune::tuner
