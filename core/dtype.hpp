#pragma once
/// The element types (ktune::DType, include/ktune/dtype.hpp, with its to_string) as every layer
/// uses them: parsing the names, sizes, the CUDA type names and host-side decoding to double (for
/// verification on the host and in tests).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "ktune/dtype.hpp"

namespace ktune {

/// Inverse of to_string; throws ktune::Error(kBadInput) naming the value and the known ones.
DType dtype_from_string(std::string_view name);
/// Bytes per element.
std::size_t size_of(DType dtype);
/// The CUDA C++ type name used in NVRTC sources ("float", "__half", "__nv_bfloat16", ...).
std::string_view cuda_type_name(DType dtype);

/// Decodes one element from its bit pattern (IEEE binary16, bfloat16, OCP FP8 E4M3FN / E5M2).
double decode_f16(uint16_t bits);
double decode_bf16(uint16_t bits);
double decode_fp8e4m3(uint8_t bits);
double decode_fp8e5m2(uint8_t bits);

/// Decodes `bytes` (a whole number of elements of `dtype`) to doubles.
std::vector<double> decode(DType dtype, std::span<const std::byte> bytes);

}  // namespace ktune
