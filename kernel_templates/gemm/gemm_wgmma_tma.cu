// gemm / wgmma_tma: C[M,N] = A[M,K] * B[N,K]^T ("nt") on Hopper's warpgroup tensor cores, the
// operands brought into shared memory by the TMA unit (sm_90a only).
//
// A block of BM / 64 + 1 warpgroups computes a BM x BN tile of C: warpgroups 0..BM/64-1 are
// consumers (warpgroup c owns rows 64c..64c+63, one m64nBNk16 wgmma per 16-wide k slice from
// 128-byte-swizzled shared memory, as gemm_wgmma.cu), the last warpgroup's first thread is the
// producer of 64-wide k tiles: the ring and both loops are gemm_wgmma_tma_pipeline.cuh's, shared
// with fp8_gemm_wgmma.cu.
//
// The tensor maps (A as [M, K], B as [N, K], boxes of 64 columns) are encoded by the host from
// the buffers' addresses and row strides (lda, ldb elements: the maps' global strides): K % 8 == 0,
// strides that are multiples of 16 bytes and 16-byte aligned pointers. Split-K and the epilogue as
// gemm_wgmma.cu (grid.z slices write f32 partials; bias, SiLU applied in f32); C's rows are ldc
// elements apart (ldc >= N, a strided view: only its M x N elements are written).
#include "gemm_epilogue.cuh"
#include "gemm_splitk_reduce.cuh"
#include "gemm_wgmma_block.cuh"
#include "gemm_wgmma_layout.cuh"
#include "gemm_wgmma_ops.cuh"
#include "gemm_wgmma_tma_pipeline.cuh"
#include "ktune_device.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "gemm_wgmma_tma.cu needs sm_90a (wgmma.mma_async, TMA): compile with --gpu-architecture=sm_90a"
#endif

template <int BM, int BN, int STAGES, int SWIZZLE, typename T, bool BIAS, bool SILU>
__global__ void __launch_bounds__((BM / 64 + 1) * 128, 1)
    ktune_gemm_wgmma_tma(const __grid_constant__ ktune_tma::TensorMap tmap_a,
                         const __grid_constant__ ktune_tma::TensorMap tmap_b, T* __restrict__ C,
                         float* __restrict__ workspace, const T* __restrict__ bias, int M, int N, int K,
                         int ldc) {
  using namespace ktune_wgmma;
  using Pipeline = TmaPipeline<BM, BN, STAGES>;
  constexpr int kAcc = BN / 2;
  static_assert(sizeof(T) == 2, "f16 or bf16");
  static_assert(kBlockK * 2 == kRowBytes, "a k tile is one swizzled row of 16-bit values");
  static_assert(SWIZZLE >= 1, "SWIZZLE >= 1");

  extern __shared__ __align__(16) unsigned char ktune_smem[];
  const Pipeline pipe(ktune_smem);
  const int wg = static_cast<int>(threadIdx.x) / kWarpgroupThreads;
  const int wt = static_cast<int>(threadIdx.x) % kWarpgroupThreads;
  const BlockWork work = block_work<BM, BN, SWIZZLE>(M, N, K);
  __syncthreads();

  if (wg == Pipeline::kConsumers) {  // the producer warpgroup: one thread issues the loads
    if (wt == 0) pipe.produce(tmap_a, tmap_b, work.m0, work.n0, work.t_begin, work.k_tiles, kBlockK);
    return;
  }
  const int c = wg;
  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
  pipe.template consume<Mma64xNk16<BN, 0, T>>(c, work.k_tiles, acc);

  store_accumulators<BIAS, SILU>(acc, C, workspace, bias, M, N, ldc, work.m0 + c * kWarpgroupRows, work.n0,
                                 wt, work.splits);
}
