// gemm / wgmma_tma: C[M,N] = A[M,K] * B[N,K]^T ("nt") on Hopper's warpgroup tensor cores, the
// operands brought into shared memory by the TMA unit (sm_90a only).
//
// A block of BM / 64 + 1 warpgroups computes a BM x BN tile of C: warpgroups 0..BM/64-1 are
// consumers (warpgroup c owns rows 64c..64c+63, one m64nBNk16 wgmma per 16-wide k slice from
// 128-byte-swizzled shared memory, as gemm_wgmma.cu), the last warpgroup's first thread is the
// producer: for each 64-wide k tile it waits until the stage is free, arms the stage's full
// barrier with the stage's bytes and issues two 2D TMA loads (A's BM x 64 box and B's BN x 64
// box, 128-byte swizzle, zero-filled beyond M, N and K), which complete on that barrier. Consumers
// wait for it, issue the tile's wgmmas, and once the previous tile's wgmmas have retired every
// consumer thread arrives on that stage's empty barrier. So all STAGES stages can be in flight, no
// block barrier is on the k loop, and no thread computes copy addresses.
//
// The tensor maps (A as [M, K], B as [N, K], boxes of 64 columns) are encoded by the host from
// the buffers' addresses: rows 16-byte aligned (K % 8 == 0) and 16-byte aligned pointers. Split-K
// and the epilogue as gemm_wgmma.cu (grid.z slices write f32 partials; bias, SiLU applied in f32).
#include "gemm_mma_epilogue.cuh"
#include "gemm_splitk_reduce.cuh"
#include "gemm_wgmma_block.cuh"
#include "gemm_wgmma_layout.cuh"
#include "gemm_wgmma_ops.cuh"
#include "gemm_wgmma_tma_sync.cuh"
#include "ktune_device.cuh"


#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "gemm_wgmma_tma.cu needs sm_90a (wgmma.mma_async, TMA): compile with --gpu-architecture=sm_90a"
#endif

template <int BM, int BN, int STAGES, int SWIZZLE, typename T, bool BIAS, bool SILU>
__global__ void __launch_bounds__((BM / 64 + 1) * 128, 1)
    ktune_gemm_wgmma_tma(const __grid_constant__ ktune_tma::TensorMap tmap_a,
                         const __grid_constant__ ktune_tma::TensorMap tmap_b, T* __restrict__ C,
                         float* __restrict__ workspace, const T* __restrict__ bias, int M, int N, int K) {
  using namespace ktune_wgmma;
  using namespace ktune_tma;
  constexpr int kConsumers = BM / kWarpgroupRows;
  constexpr int kAcc = BN / 2;
  static_assert(sizeof(T) == 2, "f16 or bf16");
  static_assert(BM == 64 || BM == 128, "BLOCK_M: 64 or 128 (one or two consumer warpgroups)");
  static_assert(BN == 64 || BN == 128 || BN == 256, "BLOCK_N: 64, 128 or 256");
  static_assert(STAGES >= 2, "STAGES >= 2");
  static_assert(SWIZZLE >= 1, "SWIZZLE >= 1");
  constexpr int A_STAGE = BM * kRowBytes;
  constexpr int B_STAGE = BN * kRowBytes;

  // Dynamic shared memory: the stages from the first 1024-byte boundary (the swizzle atoms), then
  // full[STAGES] and empty[STAGES].
  extern __shared__ __align__(16) unsigned char ktune_smem[];
  const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(ktune_smem));
  const unsigned a_addr = (raw + 1023u) & ~1023u;
  const unsigned b_addr = a_addr + STAGES * A_STAGE;
  const unsigned full_bar = b_addr + STAGES * B_STAGE;
  const unsigned empty_bar = full_bar + STAGES * 8;

  const int tid = threadIdx.x;
  const int wg = tid / kWarpgroupThreads;
  const int wt = tid % kWarpgroupThreads;
  const BlockWork work = block_work<BM, BN, SWIZZLE>(M, N, K);
  const int m0 = work.m0;
  const int n0 = work.n0;
  const int t_begin = work.t_begin;
  const int k_tiles = work.k_tiles;

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full_bar + s * 8, 1);
      mbar_init(empty_bar + s * 8, kConsumers * kWarpgroupThreads);
    }
    mbar_init_fence();
  }
  __syncthreads();

  if (wg == kConsumers) {
    // Producer: one thread.
    if (wt == 0) {
#pragma unroll 1
      for (int u = 0; u < k_tiles; ++u) {
        const int s = u % STAGES;
        if (u >= STAGES) mbar_wait(empty_bar + s * 8, static_cast<unsigned>(u / STAGES - 1) & 1u);
        const int k0 = (t_begin + u) * kBlockK;
        mbar_arrive_expect_tx(full_bar + s * 8, A_STAGE + B_STAGE);
        tma_load_2d(a_addr + s * A_STAGE, tmap_a, k0, m0, full_bar + s * 8);
        tma_load_2d(b_addr + s * B_STAGE, tmap_b, k0, n0, full_bar + s * 8);
      }
    }
    return;
  }

  // Consumers.
  const int c = wg;
  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
  auto issue_tile = [&](int t) {
    const int s = t % STAGES;
    mbar_wait(full_bar + s * 8, static_cast<unsigned>(t / STAGES) & 1u);
    const unsigned a_tile = a_addr + s * A_STAGE + c * (kWarpgroupRows * kRowBytes);
    const unsigned b_tile = b_addr + s * B_STAGE;
    __syncwarp();  // wgmma's .sync.aligned forms need converged warps
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBlockK / 16; ++kk) {
      Mma64xNk16<BN, 0, T>::run(acc, kmajor_desc(a_tile, kk), kmajor_desc(b_tile, kk));
    }
    wgmma_commit();
  };
  if (k_tiles > 0) issue_tile(0);
#pragma unroll 1
  for (int t = 1; t < k_tiles; ++t) {
    issue_tile(t);
    // Tile t - 1's wgmmas have retired: every consumer thread releases its stage (unconditionally:
    // a lane-0-only arrival makes ptxas serialise the wgmma pipeline).
    wgmma_wait<1>();
    mbar_arrive(empty_bar + ((t - 1) % STAGES) * 8);
  }
  wgmma_wait<0>();

  store_accumulators<BIAS, SILU>(acc, C, workspace, bias, M, N, m0 + c * kWarpgroupRows, n0, wt, work.splits);
}
