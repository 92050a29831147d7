// Thread block clusters (sm_90): the cluster-wide barrier and reads of another block's shared
// memory (distributed shared memory). Every block of a cluster is co-scheduled, so a block may wait
// on the others; a block's shared memory may be read by the others only between two cluster
// barriers (after the first, every block has started; before the second, none has exited).
#pragma once

namespace ktune_cluster {

/// Every thread of every block of the cluster arrives (release) and waits (acquire): writes to
/// shared and global memory before it are visible to the cluster's threads after it.
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;\n" ::
          : "memory");
}

/// The float at `local` (this block's shared memory) in the block of cluster rank `rank`.
__device__ __forceinline__ float load_remote(const float* local, unsigned rank) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(local));
  unsigned remote = 0;
  float v = 0.0f;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(rank));
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(remote) : "memory");
  return v;
}

/// The four floats at `local` (16-byte aligned, this block's shared memory) in the block of cluster
/// rank `rank`, in one 16-byte read.
__device__ __forceinline__ float4 load_remote4(const float* local, unsigned rank) {
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(local));
  unsigned remote = 0;
  float4 v;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(rank));
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(remote)
               : "memory");
  return v;
}

}  // namespace ktune_cluster
