#include "harness/tensor_map.hpp"

#include <string>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"
#include "ktune/error.hpp"

namespace ktune::harness {
namespace {

constexpr uint32_t kMaxBox = 256;        // cuTensorMapEncodeTiled: boxDim[i] <= 256
constexpr uint32_t kSwizzleBytes = 128;  // CU_TENSOR_MAP_SWIZZLE_128B: inner box extent <= 128 bytes

CUtensorMapDataType cu_type(DType d) {
  switch (d) {
    case DType::kF32:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case DType::kF16:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::kFP8E4M3:
    case DType::kFP8E5M2:
      return CU_TENSOR_MAP_DATA_TYPE_UINT8;  // TMA moves bytes; the kernel reads them as fp8
    default:
      return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  }
}

}  // namespace

TensorMap2d tensor_map_2d(DType dtype, const std::array<int64_t, 4>& map, int64_t row_stride) {
  return {dtype,
          static_cast<uint64_t>(map[0]),
          static_cast<uint64_t>(map[1]),
          static_cast<uint32_t>(map[2]),
          static_cast<uint32_t>(map[3]),
          static_cast<uint64_t>(row_stride)};
}

const char* tensor_map_rejection(const TensorMap2d& map) {
  const auto esize = static_cast<uint32_t>(size_of(map.dtype));
  if (esize == 0) return "tensor maps here take f32, f16, bf16 or fp8";
  if (map.rows == 0 || map.cols == 0) return "an empty tensor has no tensor map";
  if (map.stride() < map.cols) return "the row stride is shorter than the row (cols)";
  if ((map.stride() * esize) % 16 != 0)
    return "the row stride (row_stride or cols, times the element size) is not a multiple of 16 bytes";
  if (map.box_rows == 0 || map.box_rows > kMaxBox || map.box_cols == 0 || map.box_cols > kMaxBox)
    return "a box extent is outside [1, 256]";
  if (map.box_cols * esize > kSwizzleBytes) return "the box is wider than the 128-byte swizzle";
  return "";
}

CUtensorMap encode_tensor_map(const TensorMap2d& map, CUdeviceptr base) {
  if (const std::string why = tensor_map_rejection(map); !why.empty()) throw Error(ErrorKind::kBadInput, why);
  if (base % 16 != 0) {
    throw Error(ErrorKind::kBadInput,
                "a tensor map needs a 16-byte aligned address, got " + std::to_string(base));
  }
  const auto esize = static_cast<uint32_t>(size_of(map.dtype));
  const cuuint64_t dims[2] = {map.cols, map.rows};
  const cuuint64_t strides[1] = {map.stride() * esize};
  const cuuint32_t box[2] = {map.box_cols, map.box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  CUtensorMap out{};
  KTUNE_CU_CHECK(driver().cuTensorMapEncodeTiled(
      &out, cu_type(map.dtype), 2, reinterpret_cast<void*>(base), dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return out;
}

}  // namespace ktune::harness
