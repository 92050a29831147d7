// Device helpers shared by ktune's kernel templates: dtype conversion to and from f32 and the
// cp.async primitives (sm_80+). Compiled by NVRTC (--std=c++17); cuda_fp16.h and cuda_bf16.h are
// NVRTC's own built-in headers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace ktune_dev {

template <typename T>
__device__ __forceinline__ float to_f32(T v);
template <>
__device__ __forceinline__ float to_f32<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ float to_f32<__half>(__half v) {
  return __half2float(v);
}
template <>
__device__ __forceinline__ float to_f32<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T>
__device__ __forceinline__ T from_f32(float v);
template <>
__device__ __forceinline__ float from_f32<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_f32<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

/// Elements of T in one 16-byte vector access.
template <typename T>
struct Vec16 {
  static constexpr int kElems = 16 / static_cast<int>(sizeof(T));
};

/// Whether `p` is 16-byte aligned.
__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

/// Dot product of two 16-byte vectors of T, accumulated in f32.
template <typename T>
__device__ __forceinline__ float dot16(const int4& a, const int4& b);
template <>
__device__ __forceinline__ float dot16<float>(const int4& a, const int4& b) {
  const float4 x = *reinterpret_cast<const float4*>(&a);
  const float4 y = *reinterpret_cast<const float4*>(&b);
  return x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w;
}
template <>
__device__ __forceinline__ float dot16<__half>(const int4& a, const int4& b) {
  const __half2* x = reinterpret_cast<const __half2*>(&a);
  const __half2* y = reinterpret_cast<const __half2*>(&b);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 fx = __half22float2(x[i]);
    const float2 fy = __half22float2(y[i]);
    s += fx.x * fy.x + fx.y * fy.y;
  }
  return s;
}
template <>
__device__ __forceinline__ float dot16<__nv_bfloat16>(const int4& a, const int4& b) {
  const __nv_bfloat162* x = reinterpret_cast<const __nv_bfloat162*>(&a);
  const __nv_bfloat162* y = reinterpret_cast<const __nv_bfloat162*>(&b);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 fx = __bfloat1622float2(x[i]);
    const float2 fy = __bfloat1622float2(y[i]);
    s += fx.x * fy.x + fx.y * fy.y;
  }
  return s;
}

/// Asynchronous 16-byte global->shared copy; copies `src_bytes` (0 or 16) and zero-fills the rest.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int src_bytes) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
/// Waits until at most N committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

}  // namespace ktune_dev
