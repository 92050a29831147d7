#pragma once
/// The worker side of a candidate (docs/design.md D4, D5, docs/measurement.md "Timing protocol"): load the
/// cubins of its launch sequence, check launch limits, fill inputs with random data and poison outputs, run
/// the reference and the whole sequence once, verify, then time with the one timing path (kernel_timer.hpp:
/// warm-up, CUDA-graph batches of runs below the threshold, buffer rotation or an L2 flush, stopping rule),
/// read NVML, and optionally run the CUPTI Activity timer and the CUPTI counter pass (both over whole runs).
/// Runs inside `ktune worker`, never in the tuner's process: a faulting kernel loses the context, and the
/// worker then exits.

#include <memory>
#include <optional>
#include <string>

#include <cuda.h>

#include "harness/context.hpp"
#include "harness/device_info.hpp"
#include "ktune/error.hpp"
#include "measure/candidate.hpp"
#include "measure/utility_kernels.hpp"

namespace ktune::measure {

class LoadedSequence;
struct BufferSet;

/// Measures candidates on one GPU, inside the worker process (the tuner's side is
/// tuner::CandidateMeasurer, which talks to the worker).
class WorkerMeasurer {
 public:
  /// Retains device `ordinal`'s primary context and creates the timing stream. Throws ktune::Error
  /// (kNoDevice without a usable GPU).
  explicit WorkerMeasurer(int ordinal);
  ~WorkerMeasurer();
  WorkerMeasurer(const WorkerMeasurer&) = delete;
  WorkerMeasurer& operator=(const WorkerMeasurer&) = delete;

  /// Measures one candidate. Never throws for the candidate's sake: every failure becomes the
  /// result's outcome and reason. `*context_ok` is set false when a sticky CUDA error (illegal
  /// address, launch failure, ...) lost the context: the worker must then exit.
  CandidateResult measure(const CandidateRequest& request, bool* context_ok);

  const harness::DeviceInfo& device() const { return device_; }

 private:
  struct Timed;  // the loaded sequence and its buffer sets, flush and batch while it is timed

  const UtilityKernels& utility();
  /// The request's buffers: inputs filled (BufferSpec::fill), outputs poisoned.
  BufferSet fill_inputs(const CandidateRequest& req);
  /// Compares every check's output with its reference; false with the outcome set when one fails.
  bool verify(const CandidateRequest& req, const BufferSet& set, CandidateResult& res);
  /// One check of an integer output: compared exactly, or within the check's absolute bound.
  bool verify_integers(const OutputCheck& c, const BufferSpec& out, const BufferSpec& ref,
                       const BufferSet& set,
                       CandidateResult& res);  /// Plans the flush, adds the rotation's buffer sets, binds
                                               /// them all to the sequence and makes the
  /// timer.
  void add_rotation_sets(Timed& run);
  /// The timed samples (KernelTimer: warm-up, graph batches, stopping rule); statistics, NVML,
  /// GB/s and TFLOP/s.
  void time_samples(Timed& run, CandidateResult& res);
  /// The CUPTI Activity timer over whole runs.
  void activity_pass(Timed& run, CandidateResult& res);
  /// The CUPTI counter pass over one run.
  void counter_pass(Timed& run, CandidateResult& res);
  /// The outcome of a failure in `phase`: crashed (context lost), exceeds_limits or launch_error.
  void classify_failure(const Error& e, const std::string& phase, CandidateResult& res, bool* context_ok);

  harness::DeviceInfo device_;
  harness::PrimaryContext context_;
  CUstream stream_ = nullptr;
  std::unique_ptr<UtilityKernels> utility_;
};

}  // namespace ktune::measure
