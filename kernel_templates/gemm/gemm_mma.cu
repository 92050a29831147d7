// gemm / mma: C[M,N] = A[M,K] * B on tensor cores (mma.sync m16n8k16, f16/bf16 in, f32 accumulate),
// sm_80+.
//
// B is [N,K] row-major when B_NT ("nt", the nn.Linear weight layout) and [K,N] otherwise ("nn").
// A block computes a BM x BN tile of C with WM x WN warps, each warp a (BM/WM) x (BN/WN) tile of
// 16x8 MMA tiles. K is walked in BK-wide slices through a STAGES-deep cp.async pipeline into
// unpadded shared memory whose 16-byte chunks are XOR-swizzled (gemm_mma_primitives.cuh Swizzle),
// so both the cp.async writes and the ldmatrix reads are bank-conflict-free; the "nn" B tile is
// stored as rows of k and read with ldmatrix.trans. Global loads are 16-byte cp.async when the rows
// are 16-byte aligned (K - and N for an "nn" B - a multiple of 8, pointers 16-byte aligned), else
// element loads; every edge is predicated (zero-filled), so any M, N, K is correct.
//
// Blocks run in grouped order (SWIZZLE block-rows at a time) for L2 reuse. SPLIT_K > 1: grid.z =
// SPLIT_K blocks share the K slices (ceil(slices / SPLIT_K) each, the last ones possibly none).
// Deterministic (ATOMIC false): each writes its f32 partial tile to workspace[split][M][N] (zeros
// when it had no slice) and a reduction sums the splits in a fixed order. Atomic: every split adds
// its partial tile into workspace[M][N] (zeroed first) with f32 atomics, then a pass converts.
// Epilogue (BIAS: + bias[n], SILU: x / (1 + e^-x)) in f32 here, or in the finishing pass on split-K.
//
// Row strides (elements, runtime values): A's rows are lda apart, B's ldb (rows of n for "nt", of
// k for "nn"), C's ldc, each at least its row's length (strided views, e.g. a column slice of a
// fused projection's output). The cp.async path also needs lda and ldb multiples of 8, the paired
// C stores an even ldc. The workspace stays [split][M][N]; only C's M x N elements are written.
#include "gemm_epilogue.cuh"
#include "gemm_mma_mainloop.cuh"
#include "gemm_mma_primitives.cuh"
#include "gemm_splitk_reduce.cuh"
#include "ktune_device.cuh"

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int SPLIT_K, bool ATOMIC, int SWIZZLE,
          typename T, bool B_NT, bool BIAS, bool SILU>
__global__ void __launch_bounds__(WM* WN * 32)
    ktune_gemm_mma(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                   float* __restrict__ workspace, const T* __restrict__ bias, int M, int N, int K, int lda,
                   int ldb, int ldc) {
  using namespace ktune_dev;
  using namespace ktune_mma;
  constexpr int WTM = BM / WM;
  constexpr int WTN = BN / WN;
  constexpr int MI = WTM / 16;  // 16-row MMA tiles of a warp
  constexpr int NI = WTN / 8;   // 8-column MMA tiles of a warp
  static_assert(SPLIT_K >= 1 && SWIZZLE >= 1, "SPLIT_K, SWIZZLE >= 1");
  static_assert(!(ATOMIC && SPLIT_K == 1), "the atomic variant is a split-K variant");
  extern __shared__ __align__(128) unsigned char ktune_smem[];
  const int tid = threadIdx.x;
  const int tiles_m = (M + BM - 1) / BM;
  const int tiles_n = (N + BN - 1) / BN;
  int tm = 0;
  int tn = 0;
  block_coords<SWIZZLE>(static_cast<int>(blockIdx.x), tiles_m, tiles_n, tm, tn);
  const int m0 = tm * BM;
  const int n0 = tn * BN;
  const int split = blockIdx.z;
  const int k_tiles = (K + BK - 1) / BK;
  const int tiles_per_split = (k_tiles + SPLIT_K - 1) / SPLIT_K;
  const int t_begin = split * tiles_per_split;
  const int t_end = min(k_tiles, t_begin + tiles_per_split);
  const int n_tiles = t_end > t_begin ? t_end - t_begin : 0;

  float acc[MI][NI][4];
  mma_tile_mainloop<BM, BN, BK, WM, WN, STAGES, T, B_NT>(A, B, M, N, K, lda, ldb, m0, n0, t_begin, n_tiles,
                                                         ktune_smem, acc);
  const int lane = tid % 32;
  const int warp_m = (tid / 32) / WN;
  const int warp_n = (tid / 32) % WN;

  // Accumulator (i, j): rows lane/4 and lane/4 + 8, columns 2 (lane % 4) and +1 of the 16x8 tile.
  const int row_base = m0 + warp_m * WTM + (lane >> 2);
  const int col_base = n0 + warp_n * WTN + 2 * (lane & 3);
  const bool c_pairs = (ldc % 2 == 0) && ((reinterpret_cast<unsigned long long>(C) & 3ull) == 0);
  if (ATOMIC && n_tiles == 0) return;
#pragma unroll
  for (int i = 0; i < MI; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row_base + i * 16 + h * 8;
      if (row >= M) continue;
#pragma unroll
      for (int j = 0; j < NI; ++j) {
        const int col = col_base + j * 8;
        if (col >= N) continue;
        float v0 = acc[i][j][2 * h];
        float v1 = acc[i][j][2 * h + 1];
        const bool second = col + 1 < N;
        const size_t idx = static_cast<size_t>(row) * ldc + col;  // of C
        const size_t w_idx = static_cast<size_t>(row) * N + col;  // of the [M][N] workspace
        if (SPLIT_K == 1) {
          v0 = ktune_gemm::epilogue<BIAS, SILU>(v0, bias, col);
          if (second) v1 = ktune_gemm::epilogue<BIAS, SILU>(v1, bias, col + 1);
          if (second && c_pairs) {
            typename Pair<T>::type pair;
            pair.x = from_f32<T>(v0);
            pair.y = from_f32<T>(v1);
            *reinterpret_cast<typename Pair<T>::type*>(C + idx) = pair;
          } else {
            C[idx] = from_f32<T>(v0);
            if (second) C[idx + 1] = from_f32<T>(v1);
          }
        } else if (ATOMIC) {
          atomicAdd(workspace + w_idx, v0);
          if (second) atomicAdd(workspace + w_idx + 1, v1);
        } else {
          float* w = workspace + static_cast<size_t>(split) * M * N + w_idx;
          if (second && N % 2 == 0) {
            *reinterpret_cast<float2*>(w) = make_float2(v0, v1);
          } else {
            w[0] = v0;
            if (second) w[1] = v1;
          }
        }
      }
    }
  }
}
