// fp8_gemm: C[M,N] (bf16) = scale * A[M,K] * B[N,K]^T with A, B in e4m3 (OCP E4M3FN) and f32
// accumulation on tensor cores: mma.sync m16n8k32 e4m3 (PTX ISA 8.4+, sm_89+).
//
// Scales (f32, in device memory): per-tensor (ROWCOL false: a_scale[0] * b_scale[0]) or per row of A
// times per column of B (ROWCOL true: a_scale[m] * b_scale[n]), applied as (acc * a) * b in f32.
// The result saturates to the largest finite bf16 (+-3.3895e38) instead of rounding to inf; NaN stays
// NaN.
//
// The structure is gemm_mma.cu's with bytes for elements: a 16-byte chunk holds 16 e4m3 values and a
// 32-byte k-slice (two chunks) feeds one m16n8k32 MMA. The fragments of m16n8k32 for 8-bit types
// have the byte layout of m16n8k16's for 16-bit types (A: registers {row g, k 4t..4t+3}, {row g+8,
// same k}, {row g, k 16+4t..}, {row g+8, k 16+4t..}; B: {n g, k 4t..}, {n g, k 16+4t..}; g = lane/4,
// t = lane%4; PTX ISA "Matrix Fragments for mma.m16n8k32"), so ldmatrix.b16 on byte data gives them.
// On sm_90 .. sm_11x (no native mma.sync fp8) the fragments are converted to f16 in registers and fed
// to two m16n8k16 f16 MMAs (exact: every e4m3 value is an f16; see KTUNE_FP8_CONVERT_TO_F16).
// B is [N,K] ("nt", the nn.Linear weight layout) only: ldmatrix.trans moves 16-bit units and
// cannot transpose bytes.
//
// K is a multiple of 16 and A, B are 16-byte aligned (the spec and dispatch require both), so every
// global load is a 16-byte cp.async into XOR-swizzled shared memory; M, N and the last K slice are
// predicated (zero-filled). SPLIT_K > 1: grid.z blocks share the K slices and write f32 partial sums
// to workspace[split][M][N]; ktune_fp8_gemm_finish sums them in split order, scales and rounds.
#include "fp8_scale.cuh"
#include "gemm_mma_primitives.cuh"
#include "ktune_device.cuh"

namespace ktune_fp8 {

/// d += a * b for one 16x8x32 tile of e4m3 values, f32 accumulation.
__device__ __forceinline__ void mma_16832(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && __CUDA_ARCH__ < 1200
// Hopper and data-centre Blackwell run mma.sync e4m3 as e4m3 -> f16 conversions plus f16 MMAs
// (their native fp8 paths are wgmma / tcgen05). Converting here, B once a k-slice and A once per
// row tile, keeps fewer converted fragments live than ptxas's expansion: 128x256 tiles with 64x64
// warp tiles fit 255 registers without spills (nvrtc test; 48 bytes spilled otherwise).
#define KTUNE_FP8_CONVERT_TO_F16 1
#else
#define KTUNE_FP8_CONVERT_TO_F16 0
#endif

/// Two e4m3 values (the low and high byte of `v`) as an f16x2 (exact: every e4m3 value is an f16).
__device__ __forceinline__ unsigned e4m3x2_to_f16x2(unsigned short v) {
  unsigned r;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(r) : "h"(v));
  return r;
}

/// An m16n8k32 e4m3 fragment (A: 4 registers, B: 2) as the operands of two m16n8k16 f16 MMAs: out[h]
/// for k-half h. Register q of the e4m3 A fragment holds k 4t..4t+3 (+16 for q >= 2); its low pair
/// feeds f16 k-slots 2t, 2t+1 and its high pair slots 8+2t, 8+2t+1 of the same half. B is converted
/// by the same rule, so slot s pairs actual k 4(s%8/2) + 2(s/8) + s%2 of A and B alike.
__device__ __forceinline__ void a_to_f16(const unsigned (&a)[4], unsigned (&out)[2][4]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    out[h][0] = e4m3x2_to_f16x2(static_cast<unsigned short>(a[2 * h] & 0xffffu));
    out[h][1] = e4m3x2_to_f16x2(static_cast<unsigned short>(a[2 * h + 1] & 0xffffu));
    out[h][2] = e4m3x2_to_f16x2(static_cast<unsigned short>(a[2 * h] >> 16));
    out[h][3] = e4m3x2_to_f16x2(static_cast<unsigned short>(a[2 * h + 1] >> 16));
  }
}
__device__ __forceinline__ void b_to_f16(unsigned b0, unsigned b1, unsigned (&out)[4]) {
  out[0] = e4m3x2_to_f16x2(static_cast<unsigned short>(b0 & 0xffffu));
  out[1] = e4m3x2_to_f16x2(static_cast<unsigned short>(b0 >> 16));
  out[2] = e4m3x2_to_f16x2(static_cast<unsigned short>(b1 & 0xffffu));
  out[3] = e4m3x2_to_f16x2(static_cast<unsigned short>(b1 >> 16));
}

__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}

/// Copies a ROWS x CPR-chunk tile of a row-major byte matrix (`ld` bytes a row) into swizzled shared
/// memory: row r, chunk c from (row0 + r, col0 + 16c), zero beyond (rows, cols).
template <int ROWS, int CPR, int THREADS, typename Sw>
__device__ __forceinline__ void load_rows(unsigned dst, const unsigned char* __restrict__ src, int row0,
                                          int col0, int rows, int cols, int ld, int tid) {
  constexpr int kChunks = ROWS * CPR;
#pragma unroll
  for (int i = 0; i < (kChunks + THREADS - 1) / THREADS; ++i) {
    const int c = tid + i * THREADS;
    if (kChunks % THREADS == 0 || c < kChunks) {
      const int r = c / CPR;
      const int cc = c % CPR;
      const bool ok = (row0 + r < rows) && (col0 + cc * 16 < cols);
      const unsigned char* g = ok ? src + static_cast<size_t>(row0 + r) * ld + (col0 + cc * 16) : src;
      cp_async16(dst + Sw::offset(r, cc), g, ok ? 16 : 0);
    }
  }
}

}  // namespace ktune_fp8

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int SPLIT_K, int SWIZZLE, bool ROWCOL>
__global__ void __launch_bounds__(WM* WN * 32)
    ktune_fp8_gemm(const unsigned char* __restrict__ A, const unsigned char* __restrict__ B,
                   const float* __restrict__ a_scale, const float* __restrict__ b_scale,
                   __nv_bfloat16* __restrict__ C, float* __restrict__ workspace, int M, int N, int K) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 890
  static_assert(BM < 0 && BM >= 0, "fp8_gemm needs sm_89 or newer (mma.sync m16n8k32 e4m3)");
#else
  using namespace ktune_mma;
  using namespace ktune_fp8;
  constexpr int kThreads = WM * WN * 32;
  constexpr int WTM = BM / WM;
  constexpr int WTN = BN / WN;
  constexpr int MI = WTM / 16;  // 16-row MMA tiles of a warp
  constexpr int NI = WTN / 8;   // 8-column MMA tiles of a warp
  static_assert(WTM % 16 == 0 && WTN % 16 == 0, "warp tile: multiples of 16 rows and 16 columns");
  static_assert(BK % 32 == 0 && BK >= 32 && BK <= 256, "BLOCK_K: a multiple of the MMA's k (32) up to 256");
  static_assert(STAGES >= 2 && SPLIT_K >= 1 && SWIZZLE >= 1, "STAGES >= 2, SPLIT_K, SWIZZLE >= 1");
  constexpr int CPR = BK / 16;  // 16-byte chunks of a row of A or B
  using Sw = Swizzle<CPR>;
  constexpr int A_STAGE = BM * BK;  // bytes
  constexpr int B_STAGE = BN * BK;

  extern __shared__ __align__(128) unsigned char ktune_smem[];
  const unsigned a_smem = smem_u32(ktune_smem);
  const unsigned b_smem = a_smem + STAGES * A_STAGE;

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

  auto load_tile = [&](int stage, int tile) {
    const int k0 = tile * BK;
    load_rows<BM, CPR, kThreads, Sw>(a_smem + stage * A_STAGE, A, m0, k0, M, K, K, tid);
    load_rows<BN, CPR, kThreads, Sw>(b_smem + stage * B_STAGE, B, n0, k0, N, K, K, tid);
  };

  const int warp = tid / 32;
  const int lane = tid % 32;
  const int warp_m = warp / WN;
  const int warp_n = warp % WN;
  // ldmatrix row addresses, as gemm_mma.cu's "nt" case. A (x4): lanes 0-15 rows 0-15 at chunk 2ks,
  // lanes 16-31 at chunk 2ks+1. B (x4): (n 0-7, chunk 2ks), (n 0-7, 2ks+1), (n 8-15, 2ks), (n 8-15,
  // 2ks+1): registers 0, 1 are b0, b1 of column tile 2p and 2, 3 those of tile 2p+1. The XOR of a
  // row repeats every 16 rows, so one value serves every MMA tile of the lane.
  const int a_row = warp_m * WTM + (lane & 15);
  const int a_xor = Sw::xor_of(a_row);
  const int a_chunk = lane >> 4;
  const int b_row = warp_n * WTN + (lane & 7) + ((lane >> 4) << 3);
  const int b_xor = Sw::xor_of(b_row);
  const int b_chunk = (lane >> 3) & 1;

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
    ktune_dev::cp_async_commit();
  }
#pragma unroll 1
  for (int t = 0; t < n_tiles; ++t) {
    ktune_dev::cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int prefetch = t + STAGES - 1;
    if (prefetch < n_tiles) load_tile(prefetch % STAGES, t_begin + prefetch);
    ktune_dev::cp_async_commit();

    const unsigned a_base = a_smem + (t % STAGES) * A_STAGE;
    const unsigned b_base = b_smem + (t % STAGES) * B_STAGE;
#pragma unroll
    for (int ks = 0; ks < BK / 32; ++ks) {
#if KTUNE_FP8_CONVERT_TO_F16
      unsigned bh[NI][4];
#pragma unroll
      for (int p = 0; p < NI / 2; ++p) {
        unsigned r[4];
        ldmatrix_x4(r, b_base + ((b_row + p * 16) * CPR + ((2 * ks + b_chunk) ^ b_xor)) * 16);
        b_to_f16(r[0], r[1], bh[2 * p]);
        b_to_f16(r[2], r[3], bh[2 * p + 1]);
      }
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        unsigned af[4];
        unsigned ah[2][4];
        ldmatrix_x4(af, a_base + ((a_row + i * 16) * CPR + ((2 * ks + a_chunk) ^ a_xor)) * 16);
        a_to_f16(af, ah);
#pragma unroll
        for (int j = 0; j < NI; ++j) {
          mma_16816<__half>(acc[i][j], ah[0], bh[j][0], bh[j][1]);
          mma_16816<__half>(acc[i][j], ah[1], bh[j][2], bh[j][3]);
        }
      }
#else
      unsigned af[MI][4];
      unsigned bf[NI][2];
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        ldmatrix_x4(af[i], a_base + ((a_row + i * 16) * CPR + ((2 * ks + a_chunk) ^ a_xor)) * 16);
      }
#pragma unroll
      for (int p = 0; p < NI / 2; ++p) {
        unsigned r[4];
        ldmatrix_x4(r, b_base + ((b_row + p * 16) * CPR + ((2 * ks + b_chunk) ^ b_xor)) * 16);
        bf[2 * p][0] = r[0];
        bf[2 * p][1] = r[1];
        bf[2 * p + 1][0] = r[2];
        bf[2 * p + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < MI; ++i) {
#pragma unroll
        for (int j = 0; j < NI; ++j) mma_16832(acc[i][j], af[i], bf[j][0], bf[j][1]);
      }
#endif
    }
  }
  ktune_dev::cp_async_wait<0>();

  // Accumulator (i, j): rows lane/4 and lane/4 + 8, columns 2 (lane % 4) and +1 of the 16x8 tile.
  const int row_base = m0 + warp_m * WTM + (lane >> 2);
  const int col_base = n0 + warp_n * WTN + 2 * (lane & 3);
  const bool c_pairs = (N % 2 == 0) && ((reinterpret_cast<unsigned long long>(C) & 3ull) == 0);
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
        const float s0 = acc[i][j][2 * h];
        const float s1 = acc[i][j][2 * h + 1];
        const bool second = col + 1 < N;
        const size_t idx = static_cast<size_t>(row) * N + col;
        if (SPLIT_K == 1) {
          const float v0 = scaled<ROWCOL>(s0, a_scale, b_scale, row, col);
          if (second && c_pairs) {
            const float v1 = scaled<ROWCOL>(s1, a_scale, b_scale, row, col + 1);
            *reinterpret_cast<__nv_bfloat162*>(C + idx) = __floats2bfloat162_rn(v0, v1);
          } else {
            C[idx] = __float2bfloat16_rn(v0);
            if (second) C[idx + 1] = __float2bfloat16_rn(scaled<ROWCOL>(s1, a_scale, b_scale, row, col + 1));
          }
        } else {
          float* w = workspace + static_cast<size_t>(split) * M * N + idx;
          if (second && N % 2 == 0) {
            *reinterpret_cast<float2*>(w) = make_float2(s0, s1);
          } else {
            w[0] = s0;
            if (second) w[1] = s1;
          }
        }
      }
    }
  }
#endif
}

/// C[i] = scaled(sum over s of workspace[s][i]), s in order 0..splits-1 (deterministic), i < mn; the
/// row of i is i / n, its column i % n.
template <bool ROWCOL>
__global__ void ktune_fp8_gemm_finish(const float* __restrict__ workspace, __nv_bfloat16* __restrict__ C,
                                      const float* __restrict__ a_scale, const float* __restrict__ b_scale,
                                      long long mn, int n, int splits) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < mn; i += stride) {
    float s = 0.0f;
    for (int p = 0; p < splits; ++p) s += workspace[p * mn + i];
    C[i] = __float2bfloat16_rn(
        ktune_fp8::scaled<ROWCOL>(s, a_scale, b_scale, static_cast<int>(i / n), static_cast<int>(i % n)));
  }
}
