// Bulk asynchronous copies (sm_90, cp.async.bulk): a contiguous run of bytes from global memory
// into shared memory, completing on an mbarrier (mbarrier.cuh), and from shared memory back to
// global memory in bulk groups. One thread issues a copy of a whole row; the hardware moves it, so
// bytes stay in flight at no register or issue cost to the other threads.
//
// Addresses and sizes are multiples of 16 bytes. `smem` arguments are 32-bit shared-window
// addresses (shared_address()).
#pragma once

#include "mbarrier.cuh"

namespace ktune_async {

/// The shared-window address of a pointer into the block's shared memory.
__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Copies `bytes` from global `src` into shared `smem`; the bytes complete on the mbarrier `bar`
/// (which must expect them: mbar_arrive_expect_tx).
__device__ __forceinline__ void bulk_load(unsigned smem, const void* src, unsigned bytes, unsigned bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(smem),
      "l"(reinterpret_cast<unsigned long long>(src)), "r"(bytes), "r"(bar)
      : "memory");
}

/// Copies `bytes` from shared `smem` to global `dst` in the current bulk group. The threads that
/// wrote `smem` must have run async_proxy_fence() and synchronised with the issuing thread first.
__device__ __forceinline__ void bulk_store(void* dst, unsigned smem, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(
                   reinterpret_cast<unsigned long long>(dst)),
               "r"(smem), "r"(bytes)
               : "memory");
}

/// Closes the current bulk group (the stores issued since the last commit).
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }

/// Waits until at most PENDING of this thread's bulk groups still read their shared memory.
template <int PENDING>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(PENDING) : "memory");
}

/// Waits until every bulk group of this thread has completed (its writes are done).
__device__ __forceinline__ void bulk_wait_all() {
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

/// Orders this thread's ordinary writes to shared memory before later bulk copies that read them.
__device__ __forceinline__ void async_proxy_fence() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

}  // namespace ktune_async
