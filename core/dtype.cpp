#include "core/dtype.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune {

std::optional<DType> find_dtype(std::string_view name) noexcept {
  for (DType d : kDTypes) {
    if (name == to_string(d)) return d;
  }
  return std::nullopt;
}

DType dtype_from_string(std::string_view name) {
  if (const auto d = find_dtype(name)) return *d;
  throw Error(ErrorKind::kBadInput,
              fmt::format("unknown dtype '{}' (known: {})", name, dtype_names(kDTypes)));
}

std::optional<DType> dtype_filter_from_string(std::string_view text) {
  if (text.empty()) return std::nullopt;
  return dtype_from_string(text);
}

std::string dtype_names(std::span<const DType> dtypes, std::string_view separator) {
  std::string out;
  for (DType d : dtypes) {
    if (!out.empty()) out += separator;
    out += to_string(d);
  }
  return out;
}

std::size_t size_of(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
    case DType::kF16:
    case DType::kBF16:
      return 2;
    case DType::kFP8E4M3:
    case DType::kFP8E5M2:
      return 1;
  }
  return 0;
}

std::string_view cuda_type_name(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "float";
    case DType::kF16:
      return "__half";
    case DType::kBF16:
      return "__nv_bfloat16";
    case DType::kFP8E4M3:
      return "__nv_fp8_e4m3";
    case DType::kFP8E5M2:
      return "__nv_fp8_e5m2";
  }
  return "?";
}

namespace {
// Generic small-float decoder: sign, `exp_bits` exponent with bias, `man_bits` mantissa.
double decode_minifloat(uint32_t bits, int exp_bits, int man_bits, bool ieee_specials) {
  const uint32_t sign = (bits >> (exp_bits + man_bits)) & 1U;
  const uint32_t exp = (bits >> man_bits) & ((1U << exp_bits) - 1U);
  const uint32_t man = bits & ((1U << man_bits) - 1U);
  const int bias = (1 << (exp_bits - 1)) - 1;
  const double s = sign ? -1.0 : 1.0;
  const uint32_t exp_max = (1U << exp_bits) - 1U;
  if (ieee_specials && exp == exp_max) {
    return man ? std::numeric_limits<double>::quiet_NaN() : s * std::numeric_limits<double>::infinity();
  }
  if (exp == 0) return s * std::ldexp(static_cast<double>(man), 1 - bias - man_bits);
  return s * std::ldexp(static_cast<double>(man | (1U << man_bits)), static_cast<int>(exp) - bias - man_bits);
}
}  // namespace

double decode_f16(uint16_t bits) { return decode_minifloat(bits, 5, 10, true); }

double decode_bf16(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  return static_cast<double>(std::bit_cast<float>(wide));
}

double decode_fp8e4m3(uint8_t bits) {
  // E4M3FN: no infinities; S.1111.111 is NaN, every other pattern is finite (max 448).
  if ((bits & 0x7FU) == 0x7FU) return std::numeric_limits<double>::quiet_NaN();
  return decode_minifloat(bits, 4, 3, false);
}

double decode_fp8e5m2(uint8_t bits) { return decode_minifloat(bits, 5, 2, true); }

std::vector<double> decode(DType dtype, std::span<const std::byte> bytes) {
  const std::size_t esize = size_of(dtype);
  if (bytes.size() % esize != 0) {
    throw Error(ErrorKind::kBadInput, fmt::format("decode: {} bytes is not a whole number of {} elements",
                                                  bytes.size(), to_string(dtype)));
  }
  const std::size_t n = bytes.size() / esize;
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::byte* p = bytes.data() + i * esize;
    switch (dtype) {
      case DType::kF32: {
        float f;
        std::memcpy(&f, p, 4);
        out[i] = f;
        break;
      }
      case DType::kF16:
      case DType::kBF16: {
        uint16_t h;
        std::memcpy(&h, p, 2);
        out[i] = dtype == DType::kF16 ? decode_f16(h) : decode_bf16(h);
        break;
      }
      case DType::kFP8E4M3:
        out[i] = decode_fp8e4m3(static_cast<uint8_t>(*p));
        break;
      case DType::kFP8E5M2:
        out[i] = decode_fp8e5m2(static_cast<uint8_t>(*p));
        break;
    }
  }
  return out;
}

}  // namespace ktune
