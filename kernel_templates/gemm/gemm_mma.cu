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
#include "gemm_mma_epilogue.cuh"
#include "gemm_mma_primitives.cuh"
#include "gemm_splitk_reduce.cuh"
#include "ktune_device.cuh"

/// Copies a ROWS x (CPR 16-byte chunks) tile into swizzled shared memory: row r, chunk c comes from
/// global element (row0 + r, col0 + 8c) of a row-major matrix of `ld` elements a row and is zero
/// beyond (rows, cols). `vec`: 16-byte cp.async (rows 16-byte aligned, cols % 8 == 0); else element
/// loads and stores.
template <int ROWS, int CPR, int THREADS, typename Sw, typename T>
__device__ __forceinline__ void load_rows(unsigned char* dst, const T* __restrict__ src, int row0, int col0,
                                          int rows, int cols, int ld, bool vec, int tid) {
  constexpr int kChunks = ROWS * CPR;
  if (vec) {
#pragma unroll
    for (int i = 0; i < (kChunks + THREADS - 1) / THREADS; ++i) {
      const int c = tid + i * THREADS;
      if (kChunks % THREADS == 0 || c < kChunks) {
        const int r = c / CPR;
        const int cc = c % CPR;
        const bool ok = (row0 + r < rows) && (col0 + cc * 8 < cols);
        const T* g = ok ? src + static_cast<size_t>(row0 + r) * ld + (col0 + cc * 8) : src;
        ktune_dev::cp_async16(dst + Sw::offset(r, cc), g, ok ? 16 : 0);
      }
    }
  } else {
    for (int e = tid; e < kChunks * 8; e += THREADS) {
      const int r = e / (CPR * 8);
      const int col = e % (CPR * 8);
      const bool ok = (row0 + r < rows) && (col0 + col < cols);
      const T v = ok ? src[static_cast<size_t>(row0 + r) * ld + (col0 + col)] : ktune_dev::from_f32<T>(0.0f);
      *reinterpret_cast<T*>(dst + Sw::offset(r, col / 8) + (col % 8) * 2) = v;
    }
  }
}

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int SPLIT_K, bool ATOMIC, int SWIZZLE, typename T,
          bool B_NT, bool BIAS, bool SILU>
__global__ void __launch_bounds__(WM* WN * 32)
    ktune_gemm_mma(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                   float* __restrict__ workspace, const T* __restrict__ bias, int M, int N, int K, int lda,
                   int ldb, int ldc) {
  using namespace ktune_dev;
  using namespace ktune_mma;
  constexpr int kThreads = WM * WN * 32;
  constexpr int WTM = BM / WM;
  constexpr int WTN = BN / WN;
  constexpr int MI = WTM / 16;  // 16-row MMA tiles of a warp
  constexpr int NI = WTN / 8;   // 8-column MMA tiles of a warp
  static_assert(sizeof(T) == 2, "f16 or bf16");
  static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tile: multiples of 16 rows and 16 columns");
  static_assert(BK % 16 == 0 && BK >= 16, "BLOCK_K: a multiple of the MMA's k (16)");
  static_assert(STAGES >= 2, "STAGES >= 2");
  static_assert(SPLIT_K >= 1 && SWIZZLE >= 1, "SPLIT_K, SWIZZLE >= 1");
  static_assert(!(ATOMIC && SPLIT_K == 1), "the atomic variant is a split-K variant");
  constexpr int A_CPR = BK / 8;                 // 16-byte chunks of an A row (k)
  constexpr int B_CPR = B_NT ? BK / 8 : BN / 8;  // of a B row (k for nt, n for nn)
  constexpr int B_ROWS = B_NT ? BN : BK;
  using SwA = Swizzle<A_CPR>;
  using SwB = Swizzle<B_CPR>;
  constexpr int A_STAGE = BM * BK * 2;  // bytes
  constexpr int B_STAGE = BN * BK * 2;

  extern __shared__ __align__(128) unsigned char ktune_smem[];
  unsigned char* const a_smem = ktune_smem;
  unsigned char* const b_smem = ktune_smem + STAGES * A_STAGE;

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

  const bool vec_a = (K % 8 == 0) && (lda % 8 == 0) && aligned16(A);
  const bool vec_b = ((B_NT ? K : N) % 8 == 0) && (ldb % 8 == 0) && aligned16(B);

  auto load_tile = [&](int stage, int tile) {
    const int k0 = tile * BK;
    load_rows<BM, A_CPR, kThreads, SwA>(a_smem + stage * A_STAGE, A, m0, k0, M, K, lda, vec_a, tid);
    if (B_NT) {
      load_rows<B_ROWS, B_CPR, kThreads, SwB>(b_smem + stage * B_STAGE, B, n0, k0, N, K, ldb, vec_b, tid);
    } else {
      load_rows<B_ROWS, B_CPR, kThreads, SwB>(b_smem + stage * B_STAGE, B, k0, n0, K, N, ldb, vec_b, tid);
    }
  };

  const int warp = tid / 32;
  const int lane = tid % 32;
  const int warp_m = warp / WN;
  const int warp_n = warp % WN;

  // ldmatrix row addresses. A (x4): lanes 0-15 rows 0-15 at chunk 2ks, lanes 16-31 at chunk 2ks+1.
  // The XOR of a row repeats every 16 rows, so one value serves every MMA tile of the lane.
  const int a_row = warp_m * WTM + (lane & 15);
  const int a_xor = SwA::xor_of(a_row);
  const int a_chunk = lane >> 4;
  // B nt (x4, rows n): matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15).
  // B nn (x4.trans, rows k): (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15).
  // Either way registers 0..3 are b0, b1 of MMA column tile 2p and b0, b1 of tile 2p+1.
  const int b_row = B_NT ? warp_n * WTN + (lane & 7) + ((lane >> 4) << 3) : (lane & 7) + (((lane >> 3) & 1) << 3);
  const int b_xor = SwB::xor_of(b_row);
  const int b_chunk = B_NT ? (lane >> 3) & 1 : warp_n * (WTN / 8) + (lane >> 4);

  float acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; ++i) {
#pragma unroll
    for (int j = 0; j < NI; ++j) {
#pragma unroll
      for (int v = 0; v < 4; ++v) acc[i][j][v] = 0.0f;
    }
  }

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < n_tiles) load_tile(s, t_begin + s);
    cp_async_commit();
  }
#pragma unroll 1
  for (int t = 0; t < n_tiles; ++t) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int prefetch = t + STAGES - 1;
    if (prefetch < n_tiles) load_tile(prefetch % STAGES, t_begin + prefetch);
    cp_async_commit();

    const unsigned a_base = smem_u32(a_smem + (t % STAGES) * A_STAGE);
    const unsigned b_base = smem_u32(b_smem + (t % STAGES) * B_STAGE);
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) {
      unsigned af[MI][4];
      unsigned bf[NI][2];
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        const int row = a_row + i * 16;
        ldmatrix_x4(af[i], a_base + (row * A_CPR + ((2 * ks + a_chunk) ^ a_xor)) * 16);
      }
#pragma unroll
      for (int p = 0; p < NI / 2; ++p) {
        unsigned r[4];
        if (B_NT) {
          const int row = b_row + p * 16;
          ldmatrix_x4(r, b_base + (row * B_CPR + ((2 * ks + b_chunk) ^ b_xor)) * 16);
        } else {
          const int row = b_row + ks * 16;
          ldmatrix_x4_trans(r, b_base + (row * B_CPR + ((b_chunk + 2 * p) ^ b_xor)) * 16);
        }
        bf[2 * p][0] = r[0];
        bf[2 * p][1] = r[1];
        bf[2 * p + 1][0] = r[2];
        bf[2 * p + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < MI; ++i) {
#pragma unroll
        for (int j = 0; j < NI; ++j) mma_16816<T>(acc[i][j], af[i], bf[j][0], bf[j][1]);
      }
    }
  }
  cp_async_wait<0>();

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
          v0 = epilogue<BIAS, SILU>(v0, bias, col);
          if (second) v1 = epilogue<BIAS, SILU>(v1, bias, col + 1);
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
