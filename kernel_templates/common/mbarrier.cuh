// Shared-memory mbarriers (sm_90): init, arrive, arrive with expected transaction bytes, parity
// wait. The completion mechanism of the asynchronous copies (TMA tensor loads in gemm_wgmma_tma.cu,
// bulk copies in bulk_copy.cuh). `bar` is the 32-bit shared-window address of an 8-byte-aligned
// mbarrier (__cvta_generic_to_shared).
#pragma once

namespace ktune_async {

/// Initialises the mbarrier at `bar` to expect `count` arrivals per phase (phase 0 current).
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

/// Makes the initialisations visible to the async proxy (TMA) before any use; a barrier follows.
__device__ __forceinline__ void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/// One arrival (release).
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/// One arrival that also expects `bytes` to be completed on the barrier by asynchronous copies.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
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

}  // namespace ktune_async
