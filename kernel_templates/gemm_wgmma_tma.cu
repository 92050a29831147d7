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
#include "gemm_wgmma_layout.cuh"
#include "gemm_wgmma_ops.cuh"
#include "gemm_wgmma_tma_sync.cuh"
#include "ktune_device.cuh"

namespace ktune_tma {
/// The two-element vector type of T (__half2, __nv_bfloat162).
template <typename T>
struct Pair2;
template <>
struct Pair2<__half> {
  using type = __half2;
};
template <>
struct Pair2<__nv_bfloat16> {
  using type = __nv_bfloat162;
};
}  // namespace ktune_tma

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
  const int tiles_m = (M + BM - 1) / BM;
  const int tiles_n = (N + BN - 1) / BN;
  int tm = 0;
  int tn = 0;
  block_coords<SWIZZLE>(static_cast<int>(blockIdx.x), tiles_m, tiles_n, tm, tn);
  const int m0 = tm * BM;
  const int n0 = tn * BN;
  const int all_tiles = (K + kBlockK - 1) / kBlockK;
  const int splits = static_cast<int>(gridDim.z);
  const int per_split = (all_tiles + splits - 1) / splits;
  const int t_begin = static_cast<int>(blockIdx.z) * per_split;
  const int t_end = t_begin + per_split < all_tiles ? t_begin + per_split : all_tiles;
  const int k_tiles = t_end > t_begin ? t_end - t_begin : 0;

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

  const int row_base = m0 + c * kWarpgroupRows;
  if (splits > 1) {
    float* const part = workspace + static_cast<size_t>(blockIdx.z) * M * N;
#pragma unroll
    for (int i = 0; i < kAcc; i += 2) {
      const int row = row_base + acc_row(wt, i);
      const int col = n0 + acc_col(wt, i);
      if (row >= M || col >= N) continue;
      float* w = part + static_cast<size_t>(row) * N + col;
      w[0] = acc[i];
      if (col + 1 < N) w[1] = acc[i + 1];
    }
    return;
  }
  // Pairs of elements as one 4-byte store when N is even and C 4-byte aligned.
  const bool c_pairs = (N % 2 == 0) && ((reinterpret_cast<unsigned long long>(C) & 3ull) == 0);
#pragma unroll
  for (int i = 0; i < kAcc; i += 2) {
    const int row = row_base + acc_row(wt, i);
    const int col = n0 + acc_col(wt, i);
    if (row >= M || col >= N) continue;
    const bool second = col + 1 < N;
    const T v0 = ktune_dev::from_f32<T>(ktune_mma::epilogue<BIAS, SILU>(acc[i], bias, col));
    const T v1 = ktune_dev::from_f32<T>(second ? ktune_mma::epilogue<BIAS, SILU>(acc[i + 1], bias, col + 1) : 0.0f);
    const size_t idx = static_cast<size_t>(row) * N + col;
    if (second && c_pairs) {
      typename ktune_tma::Pair2<T>::type pair;
      pair.x = v0;
      pair.y = v1;
      *reinterpret_cast<typename ktune_tma::Pair2<T>::type*>(C + idx) = pair;
    } else {
      C[idx] = v0;
      if (second) C[idx + 1] = v1;
    }
  }
}
