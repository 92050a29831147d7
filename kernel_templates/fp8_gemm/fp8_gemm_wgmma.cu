// fp8_gemm / wgmma_tma: C[M,N] (bf16) = scale * A[M,K] * B[N,K]^T, A and B in e4m3, on Hopper's
// warpgroup tensor cores at fp8 rate (wgmma.mma_async m64nNk32 .e4m3), the operands brought into
// shared memory by the TMA unit (sm_90a only). Scales and saturation as fp8_gemm.cu (fp8_scale.cuh).
//
// The structure is gemm_wgmma_tma.cu's with bytes for elements (the ring and both loops are
// gemm_wgmma_tma_pipeline.cuh's): a k tile is 128 e4m3 values, one 128-byte swizzled row of A and
// of B, and feeds four k32 wgmmas (each slice 32 bytes, as a k16 slice of 16-bit values, so the
// descriptors are the same). A block of BM / 64 + 1 warpgroups computes a BM x BN tile of C:
// consumer warpgroup c owns rows 64c..64c+63; the last warpgroup's first thread is the producer.
// No split-K (the mma variant serves the small-M shapes where split-K pays).
//
// The tensor maps (A as [M, K] bytes, B as [N, K], boxes of 128 columns) are encoded by the host:
// K % 16 == 0 (16-byte rows) and 16-byte aligned pointers.
#include "fp8_scale.cuh"
#include "gemm_wgmma_block.cuh"
#include "gemm_wgmma_fp8_ops.cuh"
#include "gemm_wgmma_layout.cuh"
#include "gemm_wgmma_ops.cuh"
#include "gemm_wgmma_tma_pipeline.cuh"
#include "ktune_device.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "fp8_gemm_wgmma.cu needs sm_90a (wgmma.mma_async, TMA): compile with --gpu-architecture=sm_90a"
#endif

template <int BM, int BN, int STAGES, int SWIZZLE, bool ROWCOL>
__global__ void __launch_bounds__((BM / 64 + 1) * 128, 1)
    ktune_fp8_gemm_wgmma(const __grid_constant__ ktune_tma::TensorMap tmap_a,
                         const __grid_constant__ ktune_tma::TensorMap tmap_b,
                         const float* __restrict__ a_scale, const float* __restrict__ b_scale,
                         __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  using namespace ktune_wgmma;
  using Pipeline = TmaPipeline<BM, BN, STAGES>;
  constexpr int kAcc = BN / 2;
  constexpr int kTileK = kRowBytes;  // 128 e4m3 values: one swizzled row
  static_assert(SWIZZLE >= 1, "SWIZZLE >= 1");

  extern __shared__ __align__(16) unsigned char ktune_smem[];
  const Pipeline pipe(ktune_smem);
  const int wg = static_cast<int>(threadIdx.x) / kWarpgroupThreads;
  const int wt = static_cast<int>(threadIdx.x) % kWarpgroupThreads;
  const BlockWork work = block_work<BM, BN, SWIZZLE, kTileK>(M, N, K);  // grid.z 1: every k tile
  __syncthreads();

  if (wg == Pipeline::kConsumers) {  // the producer warpgroup: one thread issues the loads
    if (wt == 0) pipe.produce(tmap_a, tmap_b, work.m0, work.n0, work.t_begin, work.k_tiles, kTileK);
    return;
  }
  const int c = wg;
  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
  pipe.template consume<Mma64xNk32E4m3<BN>>(c, work.k_tiles, acc);

  // Epilogue: scaled, saturated bf16, pairs of columns when N is even and C 4-byte aligned.
  const int row_base = work.m0 + c * kWarpgroupRows;
  const bool c_pairs = (N % 2 == 0) && ((reinterpret_cast<unsigned long long>(C) & 3ull) == 0);
#pragma unroll
  for (int i = 0; i < kAcc; i += 2) {
    const int row = row_base + acc_row(wt, i);
    const int col = work.n0 + acc_col(wt, i);
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
