// gemm / wgmma: C[M,N] = A[M,K] * B on Hopper's warpgroup tensor cores (wgmma.mma_async m64nNk16,
// f16/bf16 in, f32 accumulate), sm_90a only.
//
// B is [N,K] row-major when B_NT ("nt") and [K,N] otherwise ("nn"). A block of BM / 64 warpgroups
// computes a BM x BN tile of C; warpgroup w owns rows 64w..64w+63 and all BN columns, one
// m64nBNk16 wgmma per 16-wide k slice, both operands read by the tensor cores straight from
// 128-byte-swizzled shared memory through matrix descriptors (gemm_wgmma_layout.cuh). K is walked
// in 64-wide slices through a STAGES-deep ring of shared-memory stages filled by 16-byte cp.async
// (zero-filled beyond M, N, K) when rows are 16-byte aligned (K % 8 == 0, and N % 8 == 0 for an
// "nn" B, pointers 16-byte aligned), else by element loads; so any M, N, K is correct.
//
// Pipeline, for k tile t: wait for its copies, fence them into the async proxy, barrier; issue the
// copies of tile t + STAGES - 2; issue tile t's four wgmmas, commit, then wait until only tile t's
// group is pending. A stage is refilled two tiles after it was read: by then every warpgroup has
// passed the wait that retired its wgmmas and the barrier since, so STAGES - 2 tiles are in flight
// while one wgmma group overlaps the next tile's barrier and copies.
//
// Blocks run in grouped order (SWIZZLE block-rows at a time) for L2 reuse. The epilogue (BIAS:
// + bias[n], SILU: x / (1 + e^-x)) is applied in f32 to the accumulator fragments, which are stored
// straight to C (pairs of elements when N is even and C 4-byte aligned).
//
// Split-K (gridDim.z = SPLIT_K > 1): block z multiplies k tiles [z * per, (z + 1) * per), per =
// ceil(k tiles / SPLIT_K) (the last splits may get none), and stores its f32 partial tile, without
// epilogue, to workspace[z][M][N]; ktune_gemm_splitk_reduce or, with an epilogue,
// ktune_gemm_finish (compiled from this source too) sums the splits in order: deterministic.
// It fills the SMs when M and N give few tiles (M = 512 with N = 1024: 32 tiles of 128x128).
//
// Row strides (elements, runtime values): A's rows are lda apart, B's ldb (rows of n for "nt", of
// k for "nn"), C's ldc, each at least its row's length (strided views, e.g. a column slice of a
// fused projection's output). The cp.async path also needs lda and ldb multiples of 8, the paired
// C stores an even ldc. The workspace stays [split][M][N]; only C's M x N elements are written.
#include "gemm_epilogue.cuh"
#include "gemm_splitk_reduce.cuh"
#include "gemm_wgmma_block.cuh"
#include "gemm_wgmma_layout.cuh"
#include "gemm_wgmma_ops.cuh"
#include "ktune_device.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "gemm_wgmma.cu needs sm_90a (wgmma.mma_async): compile with --gpu-architecture=sm_90a"
#endif

namespace ktune_wgmma {

/// Copies a ROWS x CHUNKS-of-16-bytes tile of a row-major matrix (`ld` elements a row) into shared
/// memory at `dst` + Offset(r, c): row r, chunk c comes from element (row0 + r, col0 + 8c) and is
/// zero beyond (rows, cols). `vec`: 16-byte cp.async (rows 16-byte aligned, cols % 8 == 0); else
/// element loads and stores.
template <int ROWS, int CHUNKS, int THREADS, bool KMAJOR, typename T>
__device__ __forceinline__ void load_tile(unsigned char* dst, const T* __restrict__ src, int row0, int col0,
                                          int rows, int cols, int ld, bool vec, int tid) {
  constexpr int kChunks = ROWS * CHUNKS;
  if (vec) {
    // THREADS is a multiple of CHUNKS (checked below), so a thread copies one chunk column cc of
    // rows r0, r0 + kStep, ...: one base pointer, one column check.
    constexpr int kStep = THREADS / CHUNKS;
    static_assert(THREADS % CHUNKS == 0 && kChunks % THREADS == 0, "whole rows of chunks per pass");
    const int r0 = tid / CHUNKS;
    const int cc = tid % CHUNKS;
    const bool col_ok = col0 + cc * 8 < cols;
    const T* g = src + static_cast<size_t>(row0 + r0) * ld + (col0 + cc * 8);
    const size_t g_step = static_cast<size_t>(kStep) * ld;
#pragma unroll
    for (int i = 0; i < kChunks / THREADS; ++i) {
      const int r = r0 + i * kStep;
      const bool ok = col_ok && (row0 + r < rows);
      const int off = KMAJOR ? kmajor_offset(r, cc) : mnmajor_offset(r, cc);
      ktune_dev::cp_async16(dst + off, ok ? g : src, ok ? 16 : 0);
      g += g_step;
    }
  } else {
    for (int e = tid; e < kChunks * 8; e += THREADS) {
      const int r = e / (CHUNKS * 8);
      const int col = e % (CHUNKS * 8);
      const bool ok = (row0 + r < rows) && (col0 + col < cols);
      const T v = ok ? src[static_cast<size_t>(row0 + r) * ld + (col0 + col)] : ktune_dev::from_f32<T>(0.0f);
      const int off = KMAJOR ? kmajor_offset(r, col / 8) : mnmajor_offset(r, col / 8);
      *reinterpret_cast<T*>(dst + off + (col % 8) * 2) = v;
    }
  }
}

}  // namespace ktune_wgmma

template <int BM, int BN, int STAGES, int SWIZZLE, typename T, bool B_NT, bool BIAS, bool SILU>
__global__ void __launch_bounds__(BM / 64 * 128, 1)
    ktune_gemm_wgmma(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                     float* __restrict__ workspace, const T* __restrict__ bias, int M, int N, int K, int lda,
                     int ldb, int ldc) {
  using namespace ktune_wgmma;
  constexpr int kThreads = BM / kWarpgroupRows * kWarpgroupThreads;
  constexpr int kAcc = BN / 2;        // f32 accumulator registers of a thread (m64nBN over 128 threads)
  constexpr int kAhead = STAGES - 2;  // k tiles in flight ahead of the one being multiplied
  static_assert(sizeof(T) == 2, "f16 or bf16");
  static_assert(BM % kWarpgroupRows == 0 && BM >= 64 && BM <= 256, "BLOCK_M: 64, 128, 192 or 256");
  static_assert(BN == 64 || BN == 128 || BN == 256, "BLOCK_N: 64, 128 or 256");
  static_assert(STAGES >= 3, "STAGES >= 3 (a stage is refilled two k tiles after it was read)");
  static_assert(SWIZZLE >= 1, "SWIZZLE >= 1");
  constexpr int A_STAGE = BM * kRowBytes;  // bytes; multiples of 1024, so every stage stays aligned
  constexpr int B_STAGE = BN * kRowBytes;  // "nn": BN/64 panels of 8192 bytes, the same size

  // Dynamic shared memory rounded up to the 1024-byte boundary the 128B swizzle atoms need (the
  // launch asks for 1 KiB more than the stages take). Declared 16-byte aligned only, so the compiler
  // cannot assume the rounding away.
  extern __shared__ __align__(16) unsigned char ktune_smem[];
  const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(ktune_smem));
  unsigned char* const smem = ktune_smem + (((raw + 1023u) & ~1023u) - raw);
  unsigned char* const a_smem = smem;
  unsigned char* const b_smem = smem + STAGES * A_STAGE;
  const unsigned a_addr = static_cast<unsigned>(__cvta_generic_to_shared(a_smem));
  const unsigned b_addr = static_cast<unsigned>(__cvta_generic_to_shared(b_smem));

  const int tid = threadIdx.x;
  const int wg = tid / kWarpgroupThreads;
  const int wt = tid % kWarpgroupThreads;
  const BlockWork work = block_work<BM, BN, SWIZZLE>(M, N, K);
  const int m0 = work.m0;
  const int n0 = work.n0;
  const int t_begin = work.t_begin;
  const int k_tiles = work.k_tiles;  // this split's k tiles

  const bool vec_a = (K % 8 == 0) && (lda % 8 == 0) && ktune_dev::aligned16(A);
  const bool vec_b = ((B_NT ? K : N) % 8 == 0) && (ldb % 8 == 0) && ktune_dev::aligned16(B);

  auto load_stage = [&](int stage, int tile) {
    const int k0 = (t_begin + tile) * kBlockK;
    load_tile<BM, kBlockK / 8, kThreads, true>(a_smem + stage * A_STAGE, A, m0, k0, M, K, lda, vec_a, tid);
    if (B_NT) {
      load_tile<BN, kBlockK / 8, kThreads, true>(b_smem + stage * B_STAGE, B, n0, k0, N, K, ldb, vec_b, tid);
    } else {
      load_tile<kBlockK, BN / 8, kThreads, false>(b_smem + stage * B_STAGE, B, k0, n0, K, N, ldb, vec_b, tid);
    }
  };

  float acc[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;

#pragma unroll
  for (int s = 0; s < kAhead; ++s) {
    if (s < k_tiles) load_stage(s, s);
    ktune_dev::cp_async_commit();
  }
#pragma unroll 1
  for (int t = 0; t < k_tiles; ++t) {
    ktune_dev::cp_async_wait<kAhead - 1>();
    fence_proxy_async();
    __syncthreads();
    const int next = t + kAhead;
    if (next < k_tiles) load_stage(next % STAGES, next);
    ktune_dev::cp_async_commit();

    const int stage = t % STAGES;
    const unsigned a_tile = a_addr + stage * A_STAGE + wg * (kWarpgroupRows * kRowBytes);
    const unsigned b_tile = b_addr + stage * B_STAGE;
    __syncwarp();  // wgmma's .sync.aligned forms need converged warps
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBlockK / 16; ++kk) {
      Mma64xNk16<BN, B_NT ? 0 : 1, T>::run(acc, kmajor_desc(a_tile, kk),
                                           B_NT ? kmajor_desc(b_tile, kk) : mnmajor_desc(b_tile, kk));
    }
    wgmma_commit();
    wgmma_wait<1>();
  }
  wgmma_wait<0>();
  ktune_dev::cp_async_wait<0>();

  store_accumulators<BIAS, SILU>(acc, C, workspace, bias, M, N, ldc, m0 + wg * kWarpgroupRows, n0, wt,
                                 work.splits);
}
