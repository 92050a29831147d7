#pragma once
/// The element types (ktune::DType, include/ktune/dtype.hpp, with its to_string) as every layer
/// uses them: parsing the names, sizes, the CUDA type names and host-side decoding to double (for
/// verification on the host and in tests).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/dtype.hpp"

namespace ktune {

/// Every DType, in enum order (the order messages list them in).
inline constexpr DType kDTypes[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kFP8E4M3, DType::kFP8E5M2};

/// Inverse of to_string: the DType named `name`, nullopt for any other text.
std::optional<DType> find_dtype(std::string_view name) noexcept;
/// Inverse of to_string; throws ktune::Error(kBadInput) naming the value and the known ones. Text
/// becomes a DType here where it enters (a file, a flag, a request), once.
DType dtype_from_string(std::string_view name);
/// A filter's dtype (a listing's or report's `--dtype`, `?dtype=`): nullopt, every dtype, for "";
/// else dtype_from_string(text).
std::optional<DType> dtype_filter_from_string(std::string_view text);
/// The names of `dtypes` joined by `separator` ("f32, f16, bf16"), for messages and help text.
std::string dtype_names(std::span<const DType> dtypes, std::string_view separator = ", ");
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
