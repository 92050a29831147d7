// Device helpers of the memory-bound LLM operators (rmsnorm, rmsnorm_rope, softmax, swiglu):
// vector loads of VEC elements (VEC * sizeof(T) of 2, 4, 8 or 16 bytes) with a per-element
// fallback, and reductions over a group of lanes or over the warps of a row group. Plain C++ with
// warp shuffles only (no inline asm), so the CPU emulation test can run it.
#pragma once

#include "ktune_device.cuh"

/// Declares `name` as the block's dynamic shared memory, 16-byte aligned (int4). A macro so the
/// CPU emulation (tests/kernel_templates/emulation/ops_emu_device.hpp) can define its own.
#ifndef KTUNE_OPS_DYNAMIC_SMEM
#define KTUNE_OPS_DYNAMIC_SMEM(name) extern __shared__ int4 name[]
#endif

namespace ktune_ops {

/// -infinity (NVRTC defines no INFINITY macro).
__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000u); }

/// 2^x with one MUFU.EX2 (ex2.approx.ftz.f32: ~2 ulp, results below 2^-126 flush to 0) instead of
/// exp2f's four instructions with subnormal scaling: softmax evaluates it twice an element, and at
/// 4096 x 32768 the exp2 instructions are a large share of the issue slots a memory-bound pass has.
/// (The CPU emulation, which has no __CUDA_ARCH__, uses exp2f.)
__device__ __forceinline__ float fast_exp2(float x) {
#ifdef __CUDA_ARCH__
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return exp2f(x);
#endif
}

/// The integer type of one VEC-element access of T (16 bytes -> int4, 8 -> int2, 4 -> int,
/// 2 -> short).
template <int BYTES>
struct RawVec;
template <>
struct RawVec<16> {
  using type = int4;
};
template <>
struct RawVec<8> {
  using type = int2;
};
template <>
struct RawVec<4> {
  using type = int;
};
template <>
struct RawVec<2> {
  using type = short;
};

/// Whether `p` is aligned to `bytes` (a power of two).
__device__ __forceinline__ bool aligned_to(const void* p, int bytes) {
  return (reinterpret_cast<unsigned long long>(p) & static_cast<unsigned long long>(bytes - 1)) == 0;
}

/// One aligned vector load; STREAM: ld.global.cs (evict-first in L1 and L2) for data read for the
/// last time, so it does not push out of L2 what is still wanted (the kernel's own output, which the
/// next kernel reads; other kernels' data).
template <bool STREAM, typename Raw>
__device__ __forceinline__ Raw load_raw(const Raw* p) {
  if (STREAM) return __ldcs(p);
  return *p;
}

/// Loads VEC elements at p (aligned to VEC * sizeof(T)) as f32.
template <typename T, int VEC, bool STREAM = false>
__device__ __forceinline__ void load_vec(const T* p, float* out) {
  using Raw = typename RawVec<VEC* static_cast<int>(sizeof(T))>::type;
  const Raw raw = load_raw<STREAM>(reinterpret_cast<const Raw*>(p));
  const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
  for (int i = 0; i < VEC; ++i) out[i] = ktune_dev::to_f32<T>(e[i]);
}

/// Stores VEC f32 values at p (aligned to VEC * sizeof(T)), rounded to T.
template <typename T, int VEC>
__device__ __forceinline__ void store_vec(T* p, const float* in) {
  using Raw = typename RawVec<VEC* static_cast<int>(sizeof(T))>::type;
  Raw raw;
  T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
  for (int i = 0; i < VEC; ++i) e[i] = ktune_dev::from_f32<T>(in[i]);
  *reinterpret_cast<Raw*>(p) = raw;
}

/// Loads the VEC elements at p[0..VEC) that lie below `limit` (index relative to p); the others
/// read as `fill`. With `vector` the whole access is one vector load (the caller checked alignment
/// and that the vector lies below the limit).
template <typename T, int VEC, bool STREAM = false>
__device__ __forceinline__ void load_some(const T* p, int limit, bool vector, float fill, float* out) {
  if (vector) {
    load_vec<T, VEC, STREAM>(p, out);
  } else {
#pragma unroll
    for (int i = 0; i < VEC; ++i) out[i] = i < limit ? ktune_dev::to_f32<T>(p[i]) : fill;
  }
}

/// Stores the elements of in[0..VEC) whose index is below `limit`.
template <typename T, int VEC>
__device__ __forceinline__ void store_some(T* p, int limit, bool vector, const float* in) {
  if (vector) {
    store_vec<T, VEC>(p, in);
  } else {
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
      if (i < limit) p[i] = ktune_dev::from_f32<T>(in[i]);
    }
  }
}

/// An empty asm statement that claims to modify `r`: values computed from `r` before it cannot be
/// reused after it, so a row kept packed is unpacked again in each pass instead of the compiler
/// keeping every unpacked f32 value alive across passes (seen: 255 registers for 128 bf16 values).
__device__ __forceinline__ void refresh(int4& r) {
  asm volatile("" : "+r"(r.x), "+r"(r.y), "+r"(r.z), "+r"(r.w));
}
__device__ __forceinline__ void refresh(int2& r) { asm volatile("" : "+r"(r.x), "+r"(r.y)); }
__device__ __forceinline__ void refresh(int& r) { asm volatile("" : "+r"(r)); }
__device__ __forceinline__ void refresh(short&) {}

/// VEC elements of T packed in registers as loaded: a row kept in registers costs sizeof(T) bytes
/// an element instead of 4 (half the registers for f16 / bf16, so more blocks fit an SM).
template <typename T, int VEC>
struct Packed {
  using Raw = typename RawVec<VEC* static_cast<int>(sizeof(T))>::type;
  Raw raw;

  /// Loads p[0..VEC): one vector load with `vector` (ld.global.cs with STREAM, see load_raw), else
  /// element by element with the elements at or past `limit` set to 0.
  template <bool STREAM = false>
  __device__ __forceinline__ void load(const T* p, int limit, bool vector) {
    if (vector) {
      raw = load_raw<STREAM>(reinterpret_cast<const Raw*>(p));
    } else {
      T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
      for (int i = 0; i < VEC; ++i) e[i] = i < limit ? p[i] : ktune_dev::from_f32<T>(0.0f);
    }
  }
  /// Stores the elements below `limit` (all of them in one vector store with `vector`).
  __device__ __forceinline__ void store(T* p, int limit, bool vector) const {
    if (vector) {
      *reinterpret_cast<Raw*>(p) = raw;
    } else {
      const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
      for (int i = 0; i < VEC; ++i) {
        if (i < limit) p[i] = e[i];
      }
    }
  }
  /// Starts a new pass over the packed values (see refresh()).
  __device__ __forceinline__ void refresh() { ktune_ops::refresh(raw); }
  __device__ __forceinline__ void unpack(float* out) const {
    const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
    for (int i = 0; i < VEC; ++i) out[i] = ktune_dev::to_f32<T>(e[i]);
  }
  /// Rounds `in` to T.
  __device__ __forceinline__ void pack(const float* in) {
    T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
    for (int i = 0; i < VEC; ++i) e[i] = ktune_dev::from_f32<T>(in[i]);
  }
};

/// Sum over aligned groups of LANES lanes (a power of two <= 32); every lane gets the group's sum.
/// Every lane of the warp must call it.
template <int LANES>
__device__ __forceinline__ float group_sum(float v) {
#pragma unroll
  for (int off = LANES / 2; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

/// Maximum over aligned groups of LANES lanes; as group_sum.
template <int LANES>
__device__ __forceinline__ float group_max(float v) {
#pragma unroll
  for (int off = LANES / 2; off > 0; off /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}

/// Sum over the THREADS threads of each row group of a block of ROWS groups (THREADS a multiple of
/// 32, threads of group r at [r * THREADS, (r + 1) * THREADS)). Every thread of the block must call
/// it (it synchronises when a group has more than one warp); `scratch` holds ROWS * THREADS / 32
/// floats. Warp partials are added in warp order: deterministic.
template <int THREADS, int ROWS>
__device__ __forceinline__ float row_sum(float v, float* scratch) {
  v = group_sum<32>(v);
  if (THREADS == 32) return v;
  constexpr int kWarps = THREADS / 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int group = warp / kWarps;
  __syncthreads();  // the previous use of scratch is over
  if (threadIdx.x % 32 == 0) scratch[warp] = v;
  __syncthreads();
  float s = 0.0f;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) s += scratch[group * kWarps + w];
  return s;
}

/// Maximum over the THREADS threads of each row group; as row_sum.
template <int THREADS, int ROWS>
__device__ __forceinline__ float row_max(float v, float* scratch) {
  v = group_max<32>(v);
  if (THREADS == 32) return v;
  constexpr int kWarps = THREADS / 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int group = warp / kWarps;
  __syncthreads();
  if (threadIdx.x % 32 == 0) scratch[warp] = v;
  __syncthreads();
  float m = scratch[group * kWarps];
#pragma unroll
  for (int w = 1; w < kWarps; ++w) m = fmaxf(m, scratch[group * kWarps + w]);
  return m;
}

}  // namespace ktune_ops
