#pragma once
// Helpers of the tuner's gpu suite: skip without a device, host bf16/f32 data, a float64 CPU GEMM,
// and the ktune binary the worker processes run ($KTUNE_BIN, else this build's).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "harness/device_info.hpp"
#include "ktune/error.hpp"

namespace ktune::tuner::gpu_test {

/// "" when a device is usable, else why not (the skip reason).
inline std::string no_device_reason() {
  try {
    return harness::device_count() > 0 ? "" : "no CUDA device";
  } catch (const Error& e) {
    return std::string("no usable CUDA device: ") + e.what();
  }
}

#define KTUNE_SKIP_WITHOUT_GPU()                                                 \
  do {                                                                           \
    const std::string ktune_why_ = ::ktune::tuner::gpu_test::no_device_reason(); \
    if (!ktune_why_.empty()) GTEST_SKIP() << ktune_why_;                         \
  } while (0)

/// Points the worker at a ktune binary: $KTUNE_BIN when set, else the one this build made.
inline void use_ktune_binary() {
  if (std::getenv("KTUNE_BIN") == nullptr) ::setenv("KTUNE_BIN", KTUNE_BUILD_CLI_PATH, 0);
}

inline uint16_t to_bf16(float f) {
  uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  u += 0x7FFF + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}
inline float from_bf16(uint16_t h) {
  const uint32_t u = uint32_t{h} << 16;
  float f = 0;
  std::memcpy(&f, &u, 4);
  return f;
}

/// Random bf16 values in ±[0.25, 1) (never zero).
inline std::vector<uint16_t> random_bf16(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mag(0.25f, 1.0f);
  std::vector<uint16_t> out(count);
  for (auto& x : out) x = to_bf16((rng() & 1 ? -1.0f : 1.0f) * mag(rng));
  return out;
}

/// Largest |got - ref| / sum|a*b| over C (bf16 inputs, B as [N,K] when nt else [K,N]); NaN -> inf.
inline double gemm_error(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                         const std::vector<uint16_t>& c, int64_t m, int64_t n, int64_t k, bool nt) {
  double worst = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0, mag = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double x = double{from_bf16(a[i * k + p])} * from_bf16(nt ? b[j * k + p] : b[p * n + j]);
        ref += x;
        mag += std::abs(x);
      }
      const double err = std::abs(from_bf16(c[i * n + j]) - ref) / mag;
      if (std::isnan(err)) return INFINITY;
      worst = std::max(worst, err);
    }
  }
  return worst;
}

/// bf16 output rounding (2^-9 relative) plus f32 accumulation, against sum|a*b|: 1/128 is loose
/// enough for any summation order and tight enough to catch a missing or doubled K tile.
inline constexpr double kBf16Tolerance = 1.0 / 128;

}  // namespace ktune::tuner::gpu_test
