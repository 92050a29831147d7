// gemm / tiled: C[M,N] = A[M,K] * B with f32 accumulation, SIMT (CUDA cores).
//
// B is [N,K] row-major when B_NT ("nt", the nn.Linear weight layout) and [K,N] otherwise ("nn").
// A block computes a BM x BN tile of C with WM x WN warps; a warp's 32 lanes form a 4 x 8 grid and
// each thread accumulates a TM x TN register tile (TM = BM / (4 WM), TN = BN / (8 WN)) of rows
// lm + 4i and columns ln + 8j, so lanes of a warp read distinct shared-memory banks. K is walked in
// BK-wide tiles through a STAGES-deep cp.async pipeline (16-byte copies when rows are 16-byte
// aligned and K - or N for "nn" B - is a multiple of 16 / sizeof(T); synchronous element copies
// otherwise). Every edge is predicated, so any M, N, K is correct.
//
// Row strides (elements, runtime values): A's rows are lda apart, B's ldb (rows of n for "nt", of
// k for "nn"), C's ldc; each is at least its row's length (a strided view, e.g. a column slice of a
// fused projection's output). The 16-byte copies also need the stride a multiple of 16 / sizeof(T).
// Only C's M x N elements are written: its columns beyond N keep their values.
//
// SPLIT_K > 1: grid.z = SPLIT_K blocks share the K tiles (ceil(tiles / SPLIT_K) each, the last ones
// possibly none); each writes its f32 partial tile to workspace[split][M][N] (zeros when it had no
// tile) and ktune_gemm_splitk_reduce sums the splits in a fixed order: the result is deterministic.
//
// Epilogue (BIAS: + bias[n]; SILU: x / (1 + e^-x); gemm_epilogue.cuh) in f32 before the output is
// rounded: here when SPLIT_K == 1, else in ktune_gemm_finish after the ordered sum of the splits.
#include "gemm_epilogue.cuh"
#include "gemm_splitk_reduce.cuh"
#include "ktune_device.cuh"

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int SPLIT_K, typename T, bool B_NT, bool BIAS,
          bool SILU>
__global__ void __launch_bounds__(WM* WN * 32)
    ktune_gemm_tiled(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                     float* __restrict__ workspace, const T* __restrict__ bias, int M, int N, int K, int lda,
                     int ldb, int ldc) {
  using namespace ktune_dev;
  constexpr int kThreads = WM * WN * 32;
  constexpr int VEC = Vec16<T>::kElems;
  constexpr int WTM = BM / WM;
  constexpr int WTN = BN / WN;
  constexpr int TM = WTM / 4;
  constexpr int TN = WTN / 8;
  static_assert(BM % (WM * 4) == 0 && BN % (WN * 8) == 0, "BLOCK_M % (4 WARPS_M) and BLOCK_N % (8 WARPS_N)");
  static_assert(BK % VEC == 0, "BLOCK_K must be a multiple of 16 bytes of T");
  static_assert(STAGES >= 2, "STAGES >= 2 (double buffering at least)");
  static_assert(SPLIT_K >= 1, "SPLIT_K >= 1");
  // One 16-byte pad per shared row keeps rows 16-byte aligned and staggers the banks of rows.
  constexpr int A_LD = BK + VEC;
  constexpr int B_ROWS = B_NT ? BN : BK;
  constexpr int B_LD = B_NT ? BK + VEC : BN + VEC;
  constexpr int A_STAGE = BM * A_LD;
  constexpr int B_STAGE = B_ROWS * B_LD;

  extern __shared__ __align__(16) unsigned char ktune_smem[];
  T* As = reinterpret_cast<T*>(ktune_smem);
  T* Bs = As + STAGES * A_STAGE;

  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * BM;
  const int n0 = blockIdx.x * BN;
  const int split = blockIdx.z;
  const int k_tiles = (K + BK - 1) / BK;
  const int tiles_per_split = (k_tiles + SPLIT_K - 1) / SPLIT_K;
  const int t_begin = split * tiles_per_split;
  const int t_end = min(k_tiles, t_begin + tiles_per_split);
  const int n_tiles = t_end > t_begin ? t_end - t_begin : 0;

  const bool vec_a = (K % VEC == 0) && (lda % VEC == 0) && aligned16(A);
  const bool vec_b = ((B_NT ? K : N) % VEC == 0) && (ldb % VEC == 0) && aligned16(B);
  const T zero = from_f32<T>(0.0f);

  auto load_tile = [&](int stage, int tile) {
    const int k0 = tile * BK;
    T* as = As + stage * A_STAGE;
    T* bs = Bs + stage * B_STAGE;
    if (vec_a) {
      for (int c = tid; c < BM * BK / VEC; c += kThreads) {
        const int r = c / (BK / VEC);
        const int kc = (c % (BK / VEC)) * VEC;
        const bool ok = (m0 + r < M) && (k0 + kc < K);
        const T* src = ok ? A + static_cast<size_t>(m0 + r) * lda + (k0 + kc) : A;
        cp_async16(as + r * A_LD + kc, src, ok ? 16 : 0);
      }
    } else {
      for (int e = tid; e < BM * BK; e += kThreads) {
        const int r = e / BK;
        const int kk = e % BK;
        const bool ok = (m0 + r < M) && (k0 + kk < K);
        as[r * A_LD + kk] = ok ? A[static_cast<size_t>(m0 + r) * lda + (k0 + kk)] : zero;
      }
    }
    // B tile: "nt" rows are n (BN x BK, K contiguous), "nn" rows are k (BK x BN, N contiguous).
    constexpr int B_COLS = B_NT ? BK : BN;
    const int row0 = B_NT ? n0 : k0;
    const int col0 = B_NT ? k0 : n0;
    const int row_limit = B_NT ? N : K;
    const int col_limit = B_NT ? K : N;
    if (vec_b) {
      for (int c = tid; c < B_ROWS * B_COLS / VEC; c += kThreads) {
        const int r = c / (B_COLS / VEC);
        const int cc = (c % (B_COLS / VEC)) * VEC;
        const bool ok = (row0 + r < row_limit) && (col0 + cc < col_limit);
        const T* src = ok ? B + static_cast<size_t>(row0 + r) * ldb + (col0 + cc) : B;
        cp_async16(bs + r * B_LD + cc, src, ok ? 16 : 0);
      }
    } else {
      for (int e = tid; e < B_ROWS * B_COLS; e += kThreads) {
        const int r = e / B_COLS;
        const int cc = e % B_COLS;
        const bool ok = (row0 + r < row_limit) && (col0 + cc < col_limit);
        bs[r * B_LD + cc] = ok ? B[static_cast<size_t>(row0 + r) * ldb + (col0 + cc)] : zero;
      }
    }
  };

  const int warp = tid / 32;
  const int lane = tid % 32;
  const int row_base = (warp / WN) * WTM + lane / 8;
  const int col_base = (warp % WN) * WTN + lane % 8;

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  }

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < n_tiles) load_tile(s, t_begin + s);
    cp_async_commit();
  }
  for (int t = 0; t < n_tiles; ++t) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int prefetch = t + STAGES - 1;
    if (prefetch < n_tiles) load_tile(prefetch % STAGES, t_begin + prefetch);
    cp_async_commit();

    const T* as = As + (t % STAGES) * A_STAGE;
    const T* bs = Bs + (t % STAGES) * B_STAGE;
#pragma unroll 4
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM];
      float b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = to_f32(as[(row_base + 4 * i) * A_LD + kk]);
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        const int col = col_base + 8 * j;
        b[j] = to_f32(B_NT ? bs[col * B_LD + kk] : bs[kk * B_LD + col]);
      }
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
  }
  cp_async_wait<0>();

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + row_base + 4 * i;
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int n = n0 + col_base + 8 * j;
      if (n >= N) continue;
      if (SPLIT_K == 1) {
        C[static_cast<size_t>(m) * ldc + n] =
            from_f32<T>(ktune_gemm::epilogue<BIAS, SILU>(acc[i][j], bias, n));
      } else {
        workspace[(static_cast<size_t>(split) * M + m) * N + n] = acc[i][j];
      }
    }
  }
}
