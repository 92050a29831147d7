// Hopper warpgroup MMA with e4m3 operands (sm_90a only) for fp8_gemm_wgmma.cu:
// wgmma.mma_async m64nNk32 .f32.e4m3.e4m3, both operands K-major in shared memory (fp8 wgmma has no
// transposed forms), f32 accumulators, D = A * B + D (scale-d 1; the caller zeroes D first).
// The accumulator fragment has the layout of the 16-bit m64nNk16 forms (gemm_wgmma_layout.cuh
// acc_row / acc_col), and a k32 slice of e4m3 is 32 bytes, as a k16 slice of 16-bit values, so the
// descriptors of gemm_wgmma_layout.cuh serve unchanged. Fence, commit, wait and the operand lists:
// gemm_wgmma_ops.cuh.
#pragma once

#include "gemm_wgmma_ops.cuh"

namespace ktune_wgmma {

/// d (64 x N f32, the warpgroup's accumulator fragment) += A (64 x 32 e4m3) * B (32 x N e4m3).
template <int N>
struct Mma64xNk32E4m3;

template <>
struct Mma64xNk32E4m3<64> {
  __device__ __forceinline__ static void run(float (&d)[32], unsigned long long a, unsigned long long b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {" KTUNE_WG_R32 "}, %32, %33, p, 1, 1;\n}\n"
        : KTUNE_WG_D32(0)
        : "l"(a), "l"(b), "r"(1));
  }
};

template <>
struct Mma64xNk32E4m3<128> {
  __device__ __forceinline__ static void run(float (&d)[64], unsigned long long a, unsigned long long b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {" KTUNE_WG_R64 "}, %64, %65, p, 1, 1;\n}\n"
        : KTUNE_WG_D64
        : "l"(a), "l"(b), "r"(1));
  }
};

template <>
struct Mma64xNk32E4m3<256> {
  __device__ __forceinline__ static void run(float (&d)[128], unsigned long long a, unsigned long long b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 {" KTUNE_WG_R128 "}, %128, %129, p, 1, 1;\n}\n"
        : KTUNE_WG_D128
        : "l"(a), "l"(b), "r"(1));
  }
};

}  // namespace ktune_wgmma
