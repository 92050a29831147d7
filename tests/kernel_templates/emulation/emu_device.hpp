// CPU stand-in for kernel_templates/common/ktune_device.cuh and the CUDA built-ins the gemm templates use:
// a block is emulated with one std::thread per CUDA thread, __syncthreads is a std::barrier, warp
// shuffles go through a block-wide buffer (every thread of a block calls them in step). bf16 is a
// 16-bit struct with round-to-nearest-even conversion; "__half" maps to it too (same code paths).
#pragma once
#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
struct uint3e {
  unsigned x = 0, y = 0, z = 0;
};
extern thread_local uint3e threadIdx, blockIdx;
extern uint3e blockDim, gridDim;
extern std::barrier<>* g_barrier;
extern float g_shfl[1024];
inline void __syncthreads() { g_barrier->arrive_and_wait(); }
struct int4 {
  int x, y, z, w;
};
struct float4 {
  float x, y, z, w;
};
struct float2 {
  float x, y;
};
inline int4 make_int4(int a, int b, int c, int d) { return {a, b, c, d}; }
template <class T>
T __ldcs(const T* p) {
  return *p;
}
template <class T>
T __ldg(const T* p) {
  return *p;
}
using std::min;
inline float __shfl_xor_sync(unsigned, float v, int mask) {
  const unsigned tid = threadIdx.x + threadIdx.y * blockDim.x;
  __syncthreads();
  g_shfl[tid] = v;
  __syncthreads();
  float r = g_shfl[(tid & ~31u) | ((tid & 31u) ^ static_cast<unsigned>(mask))];
  __syncthreads();
  return r;
}
struct bf16e {
  uint16_t bits;
};
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(x)
#define __restrict__
inline float __expf(float x) { return std::exp(x); }
namespace ktune_dev {
template <typename T>
float to_f32(T v);
template <>
inline float to_f32<float>(float v) {
  return v;
}
template <>
inline float to_f32<bf16e>(bf16e v) {
  uint32_t b = uint32_t(v.bits) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
template <typename T>
T from_f32(float v);
template <>
inline float from_f32<float>(float v) {
  return v;
}
template <>
inline bf16e from_f32<bf16e>(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  b += 0x7FFF + ((b >> 16) & 1);
  return {uint16_t(b >> 16)};
}
template <typename T>
struct Vec16 {
  static constexpr int kElems = 16 / static_cast<int>(sizeof(T));
};
inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }
template <typename T>
float dot16(const int4& a, const int4& b) {
  const T* x = reinterpret_cast<const T*>(&a);
  const T* y = reinterpret_cast<const T*>(&b);
  float s = 0;
  for (int i = 0; i < Vec16<T>::kElems; ++i) s += to_f32(x[i]) * to_f32(y[i]);
  return s;
}
inline void cp_async16(void* smem, const void* gmem, int src_bytes) {
  if (src_bytes == 16)
    std::memcpy(smem, gmem, 16);
  else
    std::memset(smem, 0, 16);
}
inline void cp_async_commit() {}
template <int N>
void cp_async_wait() {}
}  // namespace ktune_dev
