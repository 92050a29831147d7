#pragma once
/// ktune::DType: the element types of kernel buffers, one enum for the public API and every internal
/// layer (core/dtype.hpp adds sizes, parsing and decoding for ktune's own code).

namespace ktune {

/// Element type of a tensor. The dispatch runtime serves f32, f16, bf16 and (fp8_gemm's inputs)
/// fp8e4m3; fp8e5m2 is known to the measurement harness only.
enum class DType { kF32, kF16, kBF16, kFP8E4M3, kFP8E5M2 };

/// "f32", "f16", "bf16", "fp8e4m3", "fp8e5m2": the names used in shapes, the cache key and the
/// command line; "?" for a value outside the enum.
inline const char* to_string(DType dtype) noexcept {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
    case DType::kFP8E4M3:
      return "fp8e4m3";
    case DType::kFP8E5M2:
      return "fp8e5m2";
  }
  return "?";
}

}  // namespace ktune
