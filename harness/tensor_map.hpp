#pragma once
/// TMA tensor maps (CUtensorMap, Hopper) for row-major 2D tensors: the 128-byte descriptor a kernel
/// takes by value (`const __grid_constant__`) and hands to `cp.async.bulk.tensor.2d`. Encoded on
/// the host with the driver's cuTensorMapEncodeTiled once the tensor's device address is known
/// (when a launch's arguments are bound).

#include <cuda.h>

#include <array>
#include <cstdint>

#include "core/dtype.hpp"

namespace ktune::harness {

/// A row-major [rows, cols] tensor (rows row_stride elements apart; 0: cols, contiguous) read in
/// boxes of box_rows x box_cols elements, with the 128-byte shared-memory swizzle (box_cols *
/// element size must be 128 bytes or less); reads past the edges (rows, cols) are zero-filled, so
/// a strided view's columns beyond cols are never read.
struct TensorMap2d {
  DType dtype = DType::kBF16;
  uint64_t rows = 0;
  uint64_t cols = 0;
  uint32_t box_rows = 0;
  uint32_t box_cols = 0;
  uint64_t row_stride = 0;

  /// Elements from one row to the next: row_stride, or cols when it is 0.
  uint64_t stride() const { return row_stride == 0 ? cols : row_stride; }
};

/// The map of a `dtype` tensor from {rows, cols, box_rows, box_cols}, the form kernel arguments
/// carry it in (KernelArg::map, kernel_templates::ArgSpec::map), and its row stride (0: contiguous).
TensorMap2d tensor_map_2d(DType dtype, const std::array<int64_t, 4>& map, int64_t row_stride = 0);

/// Why `map` cannot be encoded for any address (dtype not f32/f16/bf16/fp8, a row stride shorter
/// than the row or not a multiple of 16 bytes, a box outside [1, 256] or wider than 128 bytes), or
/// "" when it can.
const char* tensor_map_rejection(const TensorMap2d& map);

/// The tensor map of `map` at device address `base` (16-byte aligned). Throws ktune::Error
/// (kBadInput) for a rejected map or a misaligned base, (kRuntime) when the driver refuses it.
CUtensorMap encode_tensor_map(const TensorMap2d& map, CUdeviceptr base);

}  // namespace ktune::harness
