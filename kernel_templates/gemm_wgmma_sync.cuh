// Hopper synchronisation primitives of the warp-specialised wgmma kernel (gemm_wgmma.cu,
// ktune_gemm_wgmma_ws; sm_90a): shared-memory mbarriers (init, arrive, parity wait), the cp.async
// arrive that fires when a thread's earlier cp.async copies have landed, and the warpgroup register
// reallocation (setmaxnreg) that moves registers from the producer to the consumers.
//
// A "shared address" is the 32-bit shared-window address of an 8-byte-aligned mbarrier.
#pragma once

namespace ktune_wgmma {

/// Initialises the mbarrier at `bar` to expect `count` arrivals per phase (phase 0 current).
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

/// Makes the initialisations above visible before any thread uses the barriers (a block barrier
/// must follow).
__device__ __forceinline__ void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/// One arrival (release: this thread's earlier shared-memory writes are visible to a waiter).
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/// Spins until the phase of parity `parity` of the mbarrier has completed (acquire).
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

/// One arrival on `bar`, made asynchronously once every cp.async this thread issued before it has
/// landed in shared memory (.noinc: the arrival counts against the barrier's expected count).
__device__ __forceinline__ void cp_async_mbar_arrive(unsigned bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

/// Lowers this warpgroup's registers per thread to N (all warps of the warpgroup execute it).
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
/// Raises this warpgroup's registers per thread to N, waiting until the block's pool has them.
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

}  // namespace ktune_wgmma
