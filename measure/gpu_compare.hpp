#pragma once
/// Verification on the device: the compare kernel (utility_kernels.hpp) reduces an output against
/// its reference to per-block ErrorSums, the host merges them (verification.hpp has the formula and
/// the judgement), so no output is copied to the host.

#include <cuda.h>

#include <cstdint>

#include "measure/utility_kernels.hpp"
#include "measure/verification.hpp"

namespace ktune::measure {

/// Compares `count` elements of `dtype` at `out` and `ref`; synchronises `stream`.
ErrorMetrics gpu_compare(const UtilityKernels& kernels, CUdeviceptr out, CUdeviceptr ref, DType dtype,
                         uint64_t count, CUstream stream);
/// The same for an output of `dtype` against a reference of `ref_dtype` (the same dtype, or f32).
ErrorMetrics gpu_compare(const UtilityKernels& kernels, CUdeviceptr out, DType dtype, CUdeviceptr ref,
                         DType ref_dtype, uint64_t count, CUstream stream);
/// Integer outputs of `type` against a reference of the same type; the metrics' max_abs_err is 0
/// exactly when every element matches.
ErrorMetrics gpu_compare(const UtilityKernels& kernels, CUdeviceptr out, CUdeviceptr ref, IntType type,
                         uint64_t count, CUstream stream);

}  // namespace ktune::measure
