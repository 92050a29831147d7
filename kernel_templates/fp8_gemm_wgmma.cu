// fp8_gemm / wgmma_tma: C[M,N] (bf16) = scale * A[M,K] * B[N,K]^T, A and B in e4m3, on Hopper's
// warpgroup tensor cores at fp8 rate (wgmma.mma_async m64nNk32 .e4m3), the operands brought into
// shared memory by the TMA unit (sm_90a only). Scales and saturation as fp8_gemm.cu (fp8_scale.cuh).
//
// The structure is gemm_wgmma_tma.cu's with bytes for elements: a k tile is 128 e4m3 values, one
// 128-byte swizzled row of A and of B, and feeds four k32 wgmmas (each slice 32 bytes, as a k16
// slice of 16-bit values, so the descriptors are the same). A block of BM / 64 + 1 warpgroups
// computes a BM x BN tile of C: consumer warpgroup c owns rows 64c..64c+63; the last warpgroup's
// first thread is the producer, loading each stage's A box (BM x 128 bytes) and B box (BN x 128)
// through tensor maps (zero-filled beyond M, N and K) onto the stage's full barrier; consumers hand
// a stage back on its empty barrier once the next tile's wgmmas are issued and the previous ones
// have retired. No split-K (the mma variant serves the small-M shapes where split-K pays).
//
// The tensor maps (A as [M, K] bytes, B as [N, K], boxes of 128 columns) are encoded by the host:
// K % 16 == 0 (16-byte rows) and 16-byte aligned pointers.
#include "fp8_scale.cuh"
#include "gemm_wgmma_fp8_ops.cuh"
#include "gemm_wgmma_layout.cuh"
#include "gemm_wgmma_ops.cuh"
#include "gemm_wgmma_tma_sync.cuh"
#include "ktune_device.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "fp8_gemm_wgmma.cu needs sm_90a (wgmma.mma_async, TMA): compile with --gpu-architecture=sm_90a"
#endif

template <int BM, int BN, int STAGES, int SWIZZLE, bool ROWCOL>
__global__ void __launch_bounds__((BM / 64 + 1) * 128, 1)
    ktune_fp8_gemm_wgmma(const __grid_constant__ ktune_tma::TensorMap tmap_a,
                         const __grid_constant__ ktune_tma::TensorMap tmap_b, const float* __restrict__ a_scale,
                         const float* __restrict__ b_scale, __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  using namespace ktune_wgmma;
  using namespace ktune_tma;
  constexpr int kConsumers = BM / kWarpgroupRows;
  constexpr int kAcc = BN / 2;
  constexpr int kTileK = kRowBytes;  // 128 e4m3 values: one swizzled row
  static_assert(BM == 64 || BM == 128, "BLOCK_M: 64 or 128 (one or two consumer warpgroups)");
  static_assert(BN == 64 || BN == 128 || BN == 256, "BLOCK_N: 64, 128 or 256");
  static_assert(STAGES >= 2 && SWIZZLE >= 1, "STAGES >= 2, SWIZZLE >= 1");
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
  int tm = 0;
  int tn = 0;
  block_coords<SWIZZLE>(static_cast<int>(blockIdx.x), (M + BM - 1) / BM, (N + BN - 1) / BN, tm, tn);
  const int m0 = tm * BM;
  const int n0 = tn * BN;
  const int k_tiles = (K + kTileK - 1) / kTileK;

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
        mbar_arrive_expect_tx(full_bar + s * 8, A_STAGE + B_STAGE);
        tma_load_2d(a_addr + s * A_STAGE, tmap_a, u * kTileK, m0, full_bar + s * 8);
        tma_load_2d(b_addr + s * B_STAGE, tmap_b, u * kTileK, n0, full_bar + s * 8);
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
    for (int kk = 0; kk < kRowBytes / 32; ++kk) {
      Mma64xNk32E4m3<BN>::run(acc, kmajor_desc(a_tile, kk), kmajor_desc(b_tile, kk));
    }
    wgmma_commit();
  };
  if (k_tiles > 0) issue_tile(0);
#pragma unroll 1
  for (int t = 1; t < k_tiles; ++t) {
    issue_tile(t);
    // Tile t - 1's wgmmas have retired: every consumer thread releases its stage.
    wgmma_wait<1>();
    mbar_arrive(empty_bar + ((t - 1) % STAGES) * 8);
  }
  wgmma_wait<0>();

  // Epilogue: scaled, saturated bf16, pairs of columns when N is even and C 4-byte aligned.
  const int row_base = m0 + c * kWarpgroupRows;
  const bool c_pairs = (N % 2 == 0) && ((reinterpret_cast<unsigned long long>(C) & 3ull) == 0);
#pragma unroll
  for (int i = 0; i < kAcc; i += 2) {
    const int row = row_base + acc_row(wt, i);
    const int col = n0 + acc_col(wt, i);
    if (row >= M || col >= N) continue;
    const bool second = col + 1 < N;
    const float v0 = ktune_fp8::scaled<ROWCOL>(acc[i], a_scale, b_scale, row, col);
    const float v1 = second ? ktune_fp8::scaled<ROWCOL>(acc[i + 1], a_scale, b_scale, row, col + 1) : 0.0f;
    const size_t idx = static_cast<size_t>(row) * N + col;
    if (second && c_pairs) {
      *reinterpret_cast<__nv_bfloat162*>(C + idx) = __floats2bfloat162_rn(v0, v1);
    } else {
      C[idx] = __float2bfloat16_rn(v0);
      if (second) C[idx + 1] = __float2bfloat16_rn(v1);
    }
  }
}
