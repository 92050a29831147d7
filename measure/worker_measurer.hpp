#pragma once
/// The worker side of a candidate (DESIGN.md D4, D5 and "Timing protocol"): load the cubins of its
/// launch sequence, check launch limits, fill inputs with random data and poison outputs, run the
/// reference and the whole sequence once, verify, then warm up, time (events around whole runs of
/// the sequence, CUDA-graph batches of runs for short ones, L2 flush or buffer rotation, stopping
/// rule), read NVML, and optionally run the CUPTI Activity timer and the CUPTI counter pass (both
/// over whole runs). Runs inside `ktune worker`, never in the tuner's process: a faulting
/// kernel loses the context, and the worker then exits.

#include <memory>
#include <optional>

#include <cuda.h>

#include "measure/candidate.hpp"
#include "harness/context.hpp"
#include "harness/device_info.hpp"
#include "measure/utility_kernels.hpp"

namespace ktune::harness {

class CandidateMeasurer {
 public:
  /// Retains device `ordinal`'s primary context and creates the timing stream. Throws ktune::Error
  /// (kNoDevice without a usable GPU).
  explicit CandidateMeasurer(int ordinal);
  ~CandidateMeasurer();
  CandidateMeasurer(const CandidateMeasurer&) = delete;
  CandidateMeasurer& operator=(const CandidateMeasurer&) = delete;

  /// Measures one candidate. Never throws for the candidate's sake: every failure becomes the
  /// result's outcome and reason. `*context_ok` is set false when a sticky CUDA error (illegal
  /// address, launch failure, ...) lost the context: the worker must then exit.
  CandidateResult measure(const CandidateRequest& request, bool* context_ok);

  const DeviceInfo& device() const { return device_; }

 private:
  const UtilityKernels& utility();

  DeviceInfo device_;
  PrimaryContext context_;
  CUstream stream_ = nullptr;
  std::unique_ptr<UtilityKernels> utility_;
};

}  // namespace ktune::harness
