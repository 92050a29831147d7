// Hopper synchronisation primitives of the warp-specialised wgmma kernels (gemm_wgmma.cu,
// ktune_gemm_wgmma_ws and ktune_gemm_wgmma_pair; sm_90a): shared-memory mbarriers (init, arrive,
// parity wait), the cp.async arrive that fires when a thread's earlier cp.async copies have landed,
// and for block pairs (clusters of 2) the cluster rank, addresses in the other block, cluster-wide
// barrier and arrivals, transaction counts and the bulk copy into the other block's shared memory.
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

// ---- clusters (the pair kernel, ktune_gemm_wgmma_pair) ----

/// This block's rank in its cluster.
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

/// The shared::cluster address of shared address `addr` in the block of cluster rank `rank`.
__device__ __forceinline__ unsigned cluster_address(unsigned addr, unsigned rank) {
  unsigned out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(out) : "r"(addr), "r"(rank));
  return out;
}

/// Every thread of the cluster meets (release / acquire at cluster scope); all warps converged.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

/// One arrival on an mbarrier of another block of the cluster (`cluster_addr` from
/// cluster_address), releasing this thread's earlier accesses at cluster scope.
__device__ __forceinline__ void mbar_arrive_cluster(unsigned cluster_addr) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_addr) : "memory");
}

/// One arrival that also expects `bytes` more to be completed on the barrier by asynchronous
/// copies (complete_tx) before the phase can end.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

/// mbar_wait with acquire at cluster scope: pairs with mbar_arrive_cluster from another block.
__device__ __forceinline__ void mbar_wait_cluster(unsigned bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

/// Copies `bytes` (a multiple of 16) from this block's shared memory at `src` to another block's at
/// `dst_cluster`; completion is counted as bytes on that block's mbarrier `bar_cluster`.
__device__ __forceinline__ void bulk_copy_to_peer(unsigned dst_cluster, unsigned src, unsigned bytes,
                                                  unsigned bar_cluster) {
  asm volatile(
      "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
          dst_cluster),
      "r"(src), "r"(bytes), "r"(bar_cluster)
      : "memory");
}

}  // namespace ktune_wgmma
