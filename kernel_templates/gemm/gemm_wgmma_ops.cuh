// Hopper warpgroup MMA primitives of gemm_wgmma.cu (sm_90a only): wgmma.mma_async m64nNk16 with
// f32 accumulators and both operands in shared memory (64-bit descriptors, gemm_wgmma_layout.cuh),
// the wgmma fence / commit / wait, and the generic-to-async proxy fence that makes ordinary
// (cp.async, st.shared) writes to shared memory visible to wgmma's operand reads.
//
// The m64nNk16 wrappers exist for N = 64, 128, 256 (one asm operand per accumulator
// register: N/2 of them). D = A * B + D always (scale-d 1; the caller zeroes D first), A and B
// unscaled, A K-major; TRANS_B 0: B K-major ("nt"), 1: B N-major ("nn").
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace ktune_wgmma {

/// Orders this thread's earlier register and shared-memory accesses before the warpgroup's next
/// wgmma.mma_async (required before the first one and after touching the accumulators).
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
/// Closes the group of wgmma.mma_async issued since the last commit.
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
/// Waits until at most N committed wgmma groups of this warpgroup are pending.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/// Makes this thread's generic-proxy writes to shared memory (cp.async, stores) visible to the
/// async proxy that wgmma reads its shared-memory operands through; a barrier must follow.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Operand lists of the wgmma asm statements (also gemm_wgmma_fp8_ops.cuh's): the accumulator
// fragment's N / 2 operands "+f"(d[0]) .. and their placeholders "%0, %1, ..".
#define KTUNE_WG_D4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define KTUNE_WG_D16(i) KTUNE_WG_D4(i), KTUNE_WG_D4(i + 4), KTUNE_WG_D4(i + 8), KTUNE_WG_D4(i + 12)
#define KTUNE_WG_D32(i) KTUNE_WG_D16(i), KTUNE_WG_D16(i + 16)
#define KTUNE_WG_D64 KTUNE_WG_D32(0), KTUNE_WG_D32(32)
#define KTUNE_WG_D128 KTUNE_WG_D64, KTUNE_WG_D32(64), KTUNE_WG_D32(96)
#define KTUNE_WG_R32                                                                                     \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, " \
  "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define KTUNE_WG_R64                                                                                      \
  KTUNE_WG_R32                                                                                            \
      ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, " \
      "%51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define KTUNE_WG_R128                                                                                     \
  KTUNE_WG_R64                                                                                            \
      ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, " \
      "%83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, " \
      "%102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, "  \
      "%118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

/// d (64 x N f32, the warpgroup's accumulator fragment) += A (64 x 16) * B (16 x N).
template <int N, int TRANS_B, typename T>
struct Mma64xNk16;

template <int TRANS_B>
struct Mma64xNk16<64, TRANS_B, __nv_bfloat16> {
  __device__ __forceinline__ static void run(float (&d)[32], unsigned long long a, unsigned long long b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" KTUNE_WG_R32
        "}, %32, %33, p, 1, 1, 0, %35;\n}\n"
        : KTUNE_WG_D32(0)
        : "l"(a), "l"(b), "r"(1), "n"(TRANS_B));
  }
};

template <int TRANS_B>
struct Mma64xNk16<128, TRANS_B, __nv_bfloat16> {
  __device__ __forceinline__ static void run(float (&d)[64], unsigned long long a, unsigned long long b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" KTUNE_WG_R64
        "}, %64, %65, p, 1, 1, 0, %67;\n}\n"
        : KTUNE_WG_D64
        : "l"(a), "l"(b), "r"(1), "n"(TRANS_B));
  }
};

template <int TRANS_B>
struct Mma64xNk16<256, TRANS_B, __nv_bfloat16> {
  __device__ __forceinline__ static void run(float (&d)[128], unsigned long long a, unsigned long long b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" KTUNE_WG_R128
        "}, %128, %129, p, 1, 1, 0, %131;\n}\n"
        : KTUNE_WG_D128
        : "l"(a), "l"(b), "r"(1), "n"(TRANS_B));
  }
};

template <int TRANS_B>
struct Mma64xNk16<64, TRANS_B, __half> {
  __device__ __forceinline__ static void run(float (&d)[32], unsigned long long a, unsigned long long b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {" KTUNE_WG_R32
        "}, %32, %33, p, 1, 1, 0, %35;\n}\n"
        : KTUNE_WG_D32(0)
        : "l"(a), "l"(b), "r"(1), "n"(TRANS_B));
  }
};

template <int TRANS_B>
struct Mma64xNk16<128, TRANS_B, __half> {
  __device__ __forceinline__ static void run(float (&d)[64], unsigned long long a, unsigned long long b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {" KTUNE_WG_R64
        "}, %64, %65, p, 1, 1, 0, %67;\n}\n"
        : KTUNE_WG_D64
        : "l"(a), "l"(b), "r"(1), "n"(TRANS_B));
  }
};

template <int TRANS_B>
struct Mma64xNk16<256, TRANS_B, __half> {
  __device__ __forceinline__ static void run(float (&d)[128], unsigned long long a, unsigned long long b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {" KTUNE_WG_R128
        "}, %128, %129, p, 1, 1, 0, %131;\n}\n"
        : KTUNE_WG_D128
        : "l"(a), "l"(b), "r"(1), "n"(TRANS_B));
  }
};

}  // namespace ktune_wgmma
