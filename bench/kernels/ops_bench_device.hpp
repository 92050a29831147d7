#pragma once
// Device-side pieces of the operators' benchmark (ops_bench.cpp) that keep large sizes cheap (the
// L2 flush modes are the harness's, measure/l2_flush.hpp):
// - fill_inputs_on_device fills the float inputs with the harness's counter-based random kernel
//   (no host copy: a 16384 x 14336 bf16 input is 470 MB) and the small special tensors (int32
//   positions / lengths, the rotary table) with the gpu suite's fill_inputs.
// - prepare_plan / ReadyPlan run a plan of any number of launches on the timing stream.
// - verify_on_device compares an output with its reference on the GPU (measure::gpu_compare).

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu_plan_runner.hpp"
#include "kernel_templates/kernel_spec.hpp"
#include "measure/utility_kernels.hpp"
#include "measure/verification.hpp"

namespace ktune::kernel_templates::testing {

/// A plan ready to run on a stream: each launch's function and packed arguments.
struct ReadyPlan {
  std::vector<CUfunction> functions;
  std::vector<KernelLaunch> launches;
  std::vector<std::unique_ptr<PackedArgs>> args;
  /// Enqueues every launch in order on `stream`.
  void enqueue(CUstream stream) const;
};

/// Looks up (compiling as needed) each launch's function, opts it in to its dynamic shared memory
/// above 48 KB, and packs its arguments against `tensors` (which must hold every plan tensor).
ReadyPlan prepare_plan(KernelCache& kernels, const CompileSpec& compile, const LaunchPlan& plan,
                       const DeviceTensors& tensors);

/// Allocates every tensor of `tensors`, fills the inputs (random values, seed-dependent) and poisons
/// the others; synchronises the context.
void fill_inputs_on_device(const Problem& problem, const std::vector<TensorSpec>& tensors,
                           DeviceTensors& device, const measure::UtilityKernels& utility, uint64_t seed,
                           CUstream stream);

/// Output `out` of `plan` against reference output `ref` of `ref_plan` (f32), on the GPU; judged
/// at the problem dtype's tolerance.
measure::Verdict verify_on_device(const DeviceTensors& device, const LaunchPlan& plan, const std::string& out,
                                  const LaunchPlan& ref_plan, const std::string& ref, DType dtype,
                                  const measure::UtilityKernels& utility, CUstream stream);

}  // namespace ktune::kernel_templates::testing
