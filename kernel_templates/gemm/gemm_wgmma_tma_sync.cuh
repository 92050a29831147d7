// Hopper primitives of the TMA wgmma kernel (gemm_wgmma_tma.cu, sm_90a): the shared-memory
// mbarriers of mbarrier.cuh and the 2D TMA load of a box of a tensor map into shared memory,
// completing its bytes on an mbarrier.
//
// A "shared address" is the 32-bit shared-window address (of an 8-byte-aligned mbarrier, or of a
// 1024-byte-aligned stage for the 128-byte swizzle).
#pragma once

#include "mbarrier.cuh"

namespace ktune_tma {

/// The 128-byte CUtensorMap the host encodes (harness/tensor_map.hpp), passed by value as a
/// `const __grid_constant__` kernel parameter (its address is then a generic address of param
/// space, which the TMA instruction takes).
struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};

using ktune_async::mbar_arrive;
using ktune_async::mbar_arrive_expect_tx;
using ktune_async::mbar_init;
using ktune_async::mbar_init_fence;
using ktune_async::mbar_wait;

/// Loads the box of `map` whose first element is (row, col) into shared memory at `dst`, in the
/// map's swizzle; elements outside the tensor read as zero; the box's bytes complete on `bar`.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const TensorMap& map, int col, int row,
                                            unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
      "[%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(&map)), "r"(col), "r"(row), "r"(bar)
      : "memory");
}

}  // namespace ktune_tma
