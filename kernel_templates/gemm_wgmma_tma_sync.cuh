// Hopper primitives of the TMA wgmma kernel (gemm_wgmma_tma.cu, sm_90a): shared-memory mbarriers
// (init, arrive, arrive with expected transaction bytes, parity wait) and the 2D TMA load of a box
// of a tensor map into shared memory, completing its bytes on an mbarrier.
//
// A "shared address" is the 32-bit shared-window address (of an 8-byte-aligned mbarrier, or of a
// 1024-byte-aligned stage for the 128-byte swizzle).
#pragma once

namespace ktune_tma {

/// The 128-byte CUtensorMap the host encodes (harness/tensor_map.hpp), passed by value as a
/// `const __grid_constant__` kernel parameter (its address is then a generic address of param
/// space, which the TMA instruction takes).
struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};

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

/// One arrival that also expects `bytes` to be completed on the barrier by TMA loads.
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

/// Loads the box of `map` whose first element is (row, col) into shared memory at `dst`, in the
/// map's swizzle; elements outside the tensor read as zero; the box's bytes complete on `bar`.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const TensorMap& map, int col, int row, unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
          "r"(dst),
      "l"(reinterpret_cast<unsigned long long>(&map)), "r"(col), "r"(row), "r"(bar)
      : "memory");
}

}  // namespace ktune_tma
