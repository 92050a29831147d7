#pragma once
// Helpers of the runtime's operator gpu tests: host tensors of random non-zero values rounded to
// their dtype and uploaded, poisoned outputs read back as doubles, the error measure, and running
// a call directly or captured into a CUDA graph and replayed.

#include <gtest/gtest.h>

#include <cuda.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "core/dtype.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/driver_api.hpp"
#include "kernel_templates/reference_ops.hpp"
#include "ktune/ktune.hpp"

namespace ktune::runtime::ops_gpu_test {

namespace kt = kernel_templates;
using harness::DeviceBuffer;

inline ktune::DType hdt(DType d) {
  return d == DType::kF32 ? ktune::DType::kF32 : d == DType::kF16 ? ktune::DType::kF16 : ktune::DType::kBF16;
}

/// Bits of `v`, exactly representable in `d` (a normal number or f32).
inline void encode(double v, DType d, std::byte* out) {
  if (d == DType::kF32) {
    const auto f = static_cast<float>(v);
    std::memcpy(out, &f, 4);
    return;
  }
  uint16_t bits = 0;
  if (d == DType::kBF16) {
    const auto f = static_cast<float>(v);
    uint32_t u = 0;
    std::memcpy(&u, &f, 4);
    bits = static_cast<uint16_t>(u >> 16);
  } else {
    int e = 0;
    const double m = std::frexp(std::abs(v), &e);  // |v| = m 2^e, m in [0.5, 1)
    bits = static_cast<uint16_t>((v < 0 ? 0x8000 : 0) | ((e - 1 + 15) << 10) |
                                 static_cast<int>(std::lround((2 * m - 1) * 1024)));
  }
  std::memcpy(out, &bits, 2);
}

/// A tensor of random values in ±[lo, hi) (never zero), rounded to its dtype, on host and device.
struct Tensor {
  DType dtype;
  std::vector<double> values;
  DeviceBuffer device;

  Tensor(std::size_t n, DType d, uint32_t seed, double lo = 0.25, double hi = 2.0) : dtype(d), values(n) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> mag(lo, hi);
    std::vector<std::byte> bytes(n * ktune::size_of(hdt(d)));
    for (std::size_t i = 0; i < n; ++i) {
      values[i] = kt::round_to_dtype((rng() & 1 ? -1.0 : 1.0) * mag(rng), hdt(d));
      encode(values[i], d, bytes.data() + i * ktune::size_of(hdt(d)));
    }
    device = DeviceBuffer::from_host<std::byte>(bytes);
  }
  void* ptr() const { return reinterpret_cast<void*>(device.get()); }
};

/// An output buffer of n elements, poisoned (NaN in every float format).
struct Output {
  DType dtype;
  std::size_t n;
  DeviceBuffer device;
  Output(std::size_t count, DType d) : dtype(d), n(count), device(count * ktune::size_of(hdt(d))) {
    poison();
  }
  void poison() { device.fill_u8(0xFF); }
  void* ptr() const { return reinterpret_cast<void*>(device.get()); }
  std::vector<double> read() const {
    const auto bytes = device.download_as<std::byte>(n * ktune::size_of(hdt(dtype)));
    return ktune::decode(hdt(dtype), bytes);
  }
};

/// Largest |got - ref| / (|ref| + mean |ref|); NaN -> inf.
inline double error(const std::vector<double>& got, const std::vector<double>& ref) {
  double mean = 0;
  for (double r : ref) mean += std::abs(r) / static_cast<double>(ref.size());
  double worst = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double e = std::abs(got[i] - ref[i]) / (std::abs(ref[i]) + mean);
    if (std::isnan(e)) return INFINITY;
    worst = std::max(worst, e);
  }
  return worst;
}

/// Output rounding of the dtype with room for f32 arithmetic in a different order.
inline double tolerance(DType d) { return d == DType::kF32 ? 1e-4 : d == DType::kF16 ? 2e-3 : 1e-2; }

/// Random e4m3 bytes: never zero, never NaN (0x7F, 0xFF).
inline std::vector<uint8_t> random_e4m3(std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(n);
  for (auto& b : out) {
    do {
      b = static_cast<uint8_t>(rng());
    } while ((b & 0x7F) == 0 || (b & 0x7F) == 0x7F);
  }
  return out;
}

inline std::vector<double> decoded(const std::vector<uint8_t>& bytes) {
  std::vector<double> out(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) out[i] = ktune::decode_fp8e4m3(bytes[i]);
  return out;
}

/// Runs `call` on the default stream, or captured on a stream into a graph and replayed.
inline void run(bool in_graph, const std::function<void(Stream)>& call) {
  const auto& d = harness::driver();
  if (!in_graph) {
    call(nullptr);
    KTUNE_CU_CHECK(d.cuCtxSynchronize());
    return;
  }
  CUstream s = nullptr;
  KTUNE_CU_CHECK(d.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  KTUNE_CU_CHECK(d.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  call(reinterpret_cast<Stream>(s));
  CUgraph graph = nullptr;
  KTUNE_CU_CHECK(d.cuStreamEndCapture(s, &graph));
  CUgraphExec exec = nullptr;
  KTUNE_CU_CHECK(d.cuGraphInstantiateWithFlags(&exec, graph, 0));
  KTUNE_CU_CHECK(d.cuGraphLaunch(exec, s));
  KTUNE_CU_CHECK(d.cuStreamSynchronize(s));
  KTUNE_CU_CHECK(d.cuGraphExecDestroy(exec));
  KTUNE_CU_CHECK(d.cuGraphDestroy(graph));
  KTUNE_CU_CHECK(d.cuStreamDestroy(s));
}

}  // namespace ktune::runtime::ops_gpu_test
