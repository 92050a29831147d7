// The main loop of the mma.sync GEMM templates (gemm_mma.cu, gemm_mma_cluster.cu), sm_80+: one
// BM x BN tile of C over a run of BK-wide K slices, by WM x WN warps, through a STAGES-deep cp.async
// pipeline into XOR-swizzled shared memory (gemm_mma.cu's header describes the layout).
#pragma once

#include "gemm_mma_primitives.cuh"
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

/// acc = the product of A's rows m0.. and B's columns n0.. over K slices t_begin .. t_begin + n_tiles
/// (none: zeros). `smem` holds STAGES * (BM + BN) * BK * 2 bytes. Returns with every cp.async
/// complete; the caller syncs the block before it reuses the shared memory. Accumulator (i, j, v)
/// of a lane: row warp_m * BM/WM + 16 i + lane/4 (+ 8 for v >= 2), column warp_n * BN/WN + 8 j +
/// 2 (lane % 4) + v % 2 (warp = threadIdx.x / 32, warp_m = warp / WN, warp_n = warp % WN).
template <int BM, int BN, int BK, int WM, int WN, int STAGES, typename T, bool B_NT>
__device__ __forceinline__ void mma_tile_mainloop(const T* __restrict__ A, const T* __restrict__ B, int M, int N,
                                                  int K, int lda, int ldb, int m0, int n0, int t_begin,
                                                  int n_tiles, unsigned char* smem,
                                                  float (&acc)[BM / WM / 16][BN / WN / 8][4]) {
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
  constexpr int A_CPR = BK / 8;                 // 16-byte chunks of an A row (k)
  constexpr int B_CPR = B_NT ? BK / 8 : BN / 8;  // of a B row (k for nt, n for nn)
  constexpr int B_ROWS = B_NT ? BN : BK;
  using SwA = Swizzle<A_CPR>;
  using SwB = Swizzle<B_CPR>;
  constexpr int A_STAGE = BM * BK * 2;  // bytes
  constexpr int B_STAGE = BN * BK * 2;
  unsigned char* const a_smem = smem;
  unsigned char* const b_smem = smem + STAGES * A_STAGE;
  const int tid = threadIdx.x;

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
}
