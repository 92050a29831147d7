#pragma once
/// Inputs on the device (docs/design.md D4): a counter-based RNG kernel (utility_kernels.hpp), so
/// the same (seed, index) gives the same value anywhere. Random values have magnitude in
/// [0.25, 1) * scale and a random sign: never zero, in every dtype down to fp8. fill_buffer() also
/// makes a user kernel's other fills (core/buffer_fill.hpp): a range, a pattern, an index sequence.

#include <cuda.h>

#include <cstdint>
#include <optional>

#include "core/buffer_fill.hpp"
#include "core/int_type.hpp"

#include "measure/utility_kernels.hpp"

namespace ktune::measure {

/// Fills `count` elements of `dtype` at `ptr` on `stream` (asynchronous).
void random_fill(const UtilityKernels& kernels, CUdeviceptr ptr, DType dtype, uint64_t count, uint64_t seed,
                 float scale, CUstream stream);

/// Fills `count` elements at `ptr` as `fill` says: integers of `integer` when set, else elements of
/// `dtype` (asynchronous). Throws ktune::Error(kBadInput) for a fill the element type has none of
/// (BufferFill::invalid_reason says which).
void fill_buffer(const UtilityKernels& kernels, CUdeviceptr ptr, DType dtype, std::optional<IntType> integer,
                 uint64_t count, const BufferFill& fill, uint64_t seed, CUstream stream);

}  // namespace ktune::measure
