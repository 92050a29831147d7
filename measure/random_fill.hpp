#pragma once
/// Random inputs on the device (docs/design.md D4): a counter-based RNG kernel (utility_kernels.hpp), so
/// the same (seed, index) gives the same value anywhere. Values have magnitude in [0.25, 1) * scale
/// and a random sign: never zero, in every dtype down to fp8.

#include <cuda.h>

#include <cstdint>

#include "measure/utility_kernels.hpp"

namespace ktune::harness {

/// Fills `count` elements of `dtype` at `ptr` on `stream` (asynchronous).
void random_fill(const UtilityKernels& kernels, CUdeviceptr ptr, DType dtype, uint64_t count, uint64_t seed,
                 float scale, CUstream stream);

}  // namespace ktune::harness
