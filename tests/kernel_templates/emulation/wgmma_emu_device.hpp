// CPU stand-in for what gemm_wgmma.cu uses from CUDA, ktune_device.cuh and gemm_wgmma_ops.cuh: a
// block is one std::thread per CUDA thread, __syncthreads a std::barrier. Shared memory is the host
// buffer g_smem and a "shared address" is the offset into it.
//
// wgmma.mma_async is modelled from the PTX ISA, independently of the kernel's layout helpers: each
// thread computes its own accumulator fragment (acc_row / acc_col), reading A and B through the
// decoded 64-bit descriptors as the canonical 128B-swizzle layouts define (K-major: element (i, j)
// at sw128(start + (i/8) SBO + (i%8) 128 + 2j); MN-major: element (k, n) at sw128(start + (n/64) LBO
// + (n%64) 2 + (k%8) 128 + (k/8) SBO)). Asynchrony is played adversarially, one schedule a run:
// - kLateCopies: cp.async lands only when the cp.async.wait_group that retires it runs, and a
//   wgmma reads shared memory when issued: a tile read before its copies were waited for is stale.
// - kLateMma: copies land at issue, a wgmma reads shared memory only when the wgmma.wait_group
//   that retires it runs: a stage refilled while a wgmma may still read it gives wrong sums.
#pragma once

#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "gemm_wgmma_layout.cuh"

struct uint3e {
  unsigned x = 0, y = 0, z = 0;
};
extern thread_local uint3e threadIdx, blockIdx;
extern uint3e blockDim, gridDim;
extern std::barrier<>* g_barrier;
extern unsigned char g_smem[];
inline void __syncthreads() { g_barrier->arrive_and_wait(); }
inline void __syncwarp() {}
inline unsigned long long __cvta_generic_to_shared(const void* p) {
  return static_cast<unsigned long long>(static_cast<const unsigned char*>(p) - g_smem);
}
inline float __expf(float x) { return std::exp(x); }

/// The two 16-bit formats: bf16 (round to nearest even by hand) and f16 (the compiler's _Float16).
struct bf16e {
  uint16_t bits;
};
struct f16e {
  uint16_t bits;
};
struct bf16e2 {
  bf16e x, y;
};
struct f16e2 {
  f16e x, y;
};

#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__

namespace wgmma_emu {
enum class Schedule { kLateCopies, kLateMma };
extern Schedule g_schedule;
extern std::atomic<int> g_bad_descriptors;  ///< descriptors with a base offset or a mode other than 128B
/// Deferred work of one thread, grouped as the PTX commit groups are.
struct Groups {
  std::vector<std::function<void()>> open;
  std::vector<std::vector<std::function<void()>>> committed;
  void add(std::function<void()> f) { open.push_back(std::move(f)); }
  void commit() {
    committed.push_back(std::move(open));
    open.clear();
  }
  void retire_until(std::size_t pending) {
    while (committed.size() > pending) {
      for (auto& f : committed.front()) f();
      committed.erase(committed.begin());
    }
  }
};
extern thread_local Groups t_copies;
extern thread_local Groups t_mmas;
}  // namespace wgmma_emu

namespace ktune_dev {
template <typename T>
float to_f32(T v);
template <>
inline float to_f32<bf16e>(bf16e v) {
  const uint32_t b = uint32_t(v.bits) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
template <>
inline float to_f32<f16e>(f16e v) {
  _Float16 h;
  std::memcpy(&h, &v.bits, 2);
  return static_cast<float>(h);
}
template <typename T>
T from_f32(float v);
template <>
inline bf16e from_f32<bf16e>(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  b += 0x7FFF + ((b >> 16) & 1);
  return {uint16_t(b >> 16)};
}
template <>
inline f16e from_f32<f16e>(float v) {
  const _Float16 h = static_cast<_Float16>(v);
  f16e out;
  std::memcpy(&out.bits, &h, 2);
  return out;
}
inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }
inline void cp_async16(void* smem, const void* gmem, int src_bytes) {
  auto land = [smem, gmem, src_bytes] {
    if (src_bytes == 16) {
      std::memcpy(smem, gmem, 16);
    } else {
      std::memset(smem, 0, 16);
    }
  };
  if (wgmma_emu::g_schedule == wgmma_emu::Schedule::kLateCopies) {
    wgmma_emu::t_copies.add(land);
  } else {
    land();
  }
}
inline void cp_async_commit() { wgmma_emu::t_copies.commit(); }
template <int N>
void cp_async_wait() {
  wgmma_emu::t_copies.retire_until(N);
}
}  // namespace ktune_dev

namespace ktune_wgmma {

inline void wgmma_fence() {}
inline void fence_proxy_async() {}
inline void wgmma_commit() { wgmma_emu::t_mmas.commit(); }
template <int N>
void wgmma_wait() {
  wgmma_emu::t_mmas.retire_until(N);
}

namespace emu {
inline unsigned sw128(unsigned addr) { return addr ^ (((addr >> 7) & 7u) << 4); }
struct Desc {
  unsigned start, lead, stride;
};
inline Desc decode(unsigned long long d) {
  if (((d >> 49) & 7) != 0 || (d >> 62) != 1) ++wgmma_emu::g_bad_descriptors;
  return {static_cast<unsigned>(d & 0x3FFF) << 4, static_cast<unsigned>((d >> 16) & 0x3FFF) << 4,
          static_cast<unsigned>((d >> 32) & 0x3FFF) << 4};
}
template <typename T>
float at(unsigned addr) {
  T v;
  std::memcpy(&v, g_smem + addr, sizeof v);
  return ktune_dev::to_f32(v);
}
}  // namespace emu

/// d (this thread's part of a 64 x N f32 accumulator) += A (64 x 16, K-major) * B (16 x N).
template <int N, int TRANS_B, typename T>
struct Mma64xNk16 {
  static void run(float (&d)[N / 2], unsigned long long a, unsigned long long b) {
    const int t = static_cast<int>(threadIdx.x % 128);
    float* out = d;
    auto mma = [out, a, b, t] {
      const emu::Desc da = emu::decode(a);
      const emu::Desc db = emu::decode(b);
      for (int i = 0; i < N / 2; ++i) {
        const int row = acc_row(t, i);
        const int col = acc_col(t, i);
        float s = 0.0f;
        for (int j = 0; j < 16; ++j) {
          const float x =
              emu::at<T>(emu::sw128(da.start + (row / 8) * da.stride + (row % 8) * 128u + 2u * j));
          const unsigned b_addr =
              TRANS_B == 0 ? emu::sw128(db.start + (col / 8) * db.stride + (col % 8) * 128u + 2u * j)
                           : emu::sw128(db.start + (col / 64) * db.lead + (col % 64) * 2u + (j % 8) * 128u +
                                        (j / 8) * db.stride);
          s += x * emu::at<T>(b_addr);
        }
        out[i] += s;
      }
    };
    if (wgmma_emu::g_schedule == wgmma_emu::Schedule::kLateMma) {
      wgmma_emu::t_mmas.add(mma);
    } else {
      mma();
    }
  }
};

}  // namespace ktune_wgmma
