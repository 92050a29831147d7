// The main loop of the TMA-fed wgmma GEMMs (gemm_wgmma_tma.cu: 16-bit, fp8_gemm_wgmma.cu: e4m3,
// sm_90a): a STAGES-deep ring of 128-byte-swizzled A and B stages in dynamic shared memory, filled
// by one producer thread with 2D TMA loads and drained by BM / 64 consumer warpgroups.
//
// A k tile is one 128-byte swizzled row of A and of B (64 16-bit or 128 e4m3 values) and feeds
// four wgmmas of a 32-byte k slice each (m64nNk16 16-bit or m64nNk32 e4m3: the descriptors of
// gemm_wgmma_layout.cuh serve both). The producer, for each tile, waits until the stage is free,
// arms the stage's full barrier with its bytes and issues the A box (BM rows) and the B box (BN
// rows), zero-filled beyond M, N and K. A consumer waits for the full barrier, issues the tile's
// wgmmas, and once the previous tile's wgmmas have retired every consumer thread arrives on that
// stage's empty barrier. So all STAGES stages can be in flight, and no block barrier is on the k
// loop.
#pragma once

#include "gemm_wgmma_layout.cuh"
#include "gemm_wgmma_ops.cuh"
#include "gemm_wgmma_tma_sync.cuh"

namespace ktune_wgmma {

template <int BM, int BN, int STAGES>
struct TmaPipeline {
  static constexpr int kConsumers = BM / kWarpgroupRows;
  static constexpr int kAStage = BM * kRowBytes;
  static constexpr int kBStage = BN * kRowBytes;
  static constexpr int kSlices = kRowBytes / 32;  ///< wgmmas a k tile: 32-byte k slices
  static_assert(BM == 64 || BM == 128, "BLOCK_M: 64 or 128 (one or two consumer warpgroups)");
  static_assert(BN == 64 || BN == 128 || BN == 256, "BLOCK_N: 64, 128 or 256");
  static_assert(STAGES >= 2, "STAGES >= 2");

  unsigned a_addr;     ///< stage s of A at a_addr + s * kAStage (1024-byte aligned)
  unsigned b_addr;     ///< stage s of B at b_addr + s * kBStage
  unsigned full_bar;   ///< full[s]: the stage's bytes landed
  unsigned empty_bar;  ///< empty[s]: every consumer thread is done with the stage

  /// The ring in `smem` (the block's dynamic shared memory): the stages from its first 1024-byte
  /// boundary (the swizzle atoms), then full[STAGES] and empty[STAGES], initialised by thread 0.
  /// The block must synchronise before the first use.
  __device__ __forceinline__ explicit TmaPipeline(const unsigned char* smem) {
    const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    a_addr = (raw + 1023u) & ~1023u;
    b_addr = a_addr + STAGES * kAStage;
    full_bar = b_addr + STAGES * kBStage;
    empty_bar = full_bar + STAGES * 8;
    if (threadIdx.x == 0) {
      for (int s = 0; s < STAGES; ++s) {
        ktune_tma::mbar_init(full_bar + s * 8, 1);
        ktune_tma::mbar_init(empty_bar + s * 8, kConsumers * kWarpgroupThreads);
      }
      ktune_tma::mbar_init_fence();
    }
  }

  /// The producer (one thread): k tiles t_begin .. t_begin + k_tiles of the block's rows m0.. of A
  /// and n0.. of B, a tile `tile_cols` elements wide.
  __device__ __forceinline__ void produce(const ktune_tma::TensorMap& map_a,
                                          const ktune_tma::TensorMap& map_b, int m0, int n0, int t_begin,
                                          int k_tiles, int tile_cols) const {
#pragma unroll 1
    for (int u = 0; u < k_tiles; ++u) {
      const int s = u % STAGES;
      if (u >= STAGES) ktune_tma::mbar_wait(empty_bar + s * 8, static_cast<unsigned>(u / STAGES - 1) & 1u);
      const int k0 = (t_begin + u) * tile_cols;
      ktune_tma::mbar_arrive_expect_tx(full_bar + s * 8, kAStage + kBStage);
      ktune_tma::tma_load_2d(a_addr + s * kAStage, map_a, k0, m0, full_bar + s * 8);
      ktune_tma::tma_load_2d(b_addr + s * kBStage, map_b, k0, n0, full_bar + s * 8);
    }
  }

  /// Consumer warpgroup c: acc (its 64 x BN f32 fragment, zeroed by the caller) += its 64 rows of
  /// A times B over k_tiles tiles, with Mma::run(acc, a_desc, b_desc) the wgmma of one k slice.
  /// Returns once every wgmma has retired.
  template <class Mma, int ACC>
  __device__ __forceinline__ void consume(int c, int k_tiles, float (&acc)[ACC]) const {
    auto issue_tile = [&](int t) {
      const int s = t % STAGES;
      ktune_tma::mbar_wait(full_bar + s * 8, static_cast<unsigned>(t / STAGES) & 1u);
      const unsigned a_tile = a_addr + s * kAStage + c * (kWarpgroupRows * kRowBytes);
      const unsigned b_tile = b_addr + s * kBStage;
      __syncwarp();  // wgmma's .sync.aligned forms need converged warps
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kSlices; ++kk) Mma::run(acc, kmajor_desc(a_tile, kk), kmajor_desc(b_tile, kk));
      wgmma_commit();
    };
    if (k_tiles > 0) issue_tile(0);
#pragma unroll 1
    for (int t = 1; t < k_tiles; ++t) {
      issue_tile(t);
      // Tile t - 1's wgmmas have retired: every consumer thread releases its stage (unconditionally:
      // a lane-0-only arrival makes ptxas serialise the wgmma pipeline).
      wgmma_wait<1>();
      ktune_tma::mbar_arrive(empty_bar + ((t - 1) % STAGES) * 8);
    }
    wgmma_wait<0>();
  }
};

}  // namespace ktune_wgmma
