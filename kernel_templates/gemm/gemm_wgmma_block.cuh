// A block's share of a wgmma GEMM (gemm_wgmma.cu, gemm_wgmma_tma.cu): its BM x BN tile of C in the
// grouped order, its slice of the k tiles (split-K over gridDim.z), and the store of a
// warpgroup's accumulator fragment: an f32 partial tile into workspace[z] when split (the
// reduction applies the epilogue), else C (rows ldc elements apart) with the epilogue (BIAS:
// + bias[n], SILU: x / (1 + e^-x)) in f32, pairs of elements when ldc is even and C 4-byte aligned,
// predicated at the M and N edges.
#pragma once

#include "gemm_wgmma_layout.cuh"
#include "ktune_device.cuh"

namespace ktune_wgmma {

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

/// silu(v + bias[col]) with each part present only when asked for.
template <bool BIAS, bool SILU, typename T>
__device__ __forceinline__ float epilogue(float v, const T* __restrict__ bias, int col) {
  if (BIAS) v += ktune_dev::to_f32(bias[col]);
  if (SILU) v = v / (1.0f + __expf(-v));
  return v;
}

/// What this block computes: rows m0.., columns n0.. of C, k tiles t_begin .. t_begin + k_tiles.
struct BlockWork {
  int m0 = 0;
  int n0 = 0;
  int t_begin = 0;
  int k_tiles = 0;  ///< may be 0: the last splits of a short K get none (they store zeros)
  int splits = 1;
};

/// This block's work: grouped order over the tiles (blockIdx.x), split z = blockIdx.z of
/// gridDim.z taking ceil(k tiles / splits) k tiles of TILE_K elements.
template <int BM, int BN, int SWIZZLE, int TILE_K = kBlockK>
__device__ __forceinline__ BlockWork block_work(int M, int N, int K) {
  BlockWork w;
  int tm = 0;
  int tn = 0;
  block_coords<SWIZZLE>(static_cast<int>(blockIdx.x), (M + BM - 1) / BM, (N + BN - 1) / BN, tm, tn);
  w.m0 = tm * BM;
  w.n0 = tn * BN;
  const int all_tiles = (K + TILE_K - 1) / TILE_K;
  w.splits = static_cast<int>(gridDim.z);
  const int per_split = (all_tiles + w.splits - 1) / w.splits;
  w.t_begin = static_cast<int>(blockIdx.z) * per_split;
  const int t_end = w.t_begin + per_split < all_tiles ? w.t_begin + per_split : all_tiles;
  w.k_tiles = t_end > w.t_begin ? t_end - w.t_begin : 0;
  return w;
}

/// Stores thread `wt`'s part of a warpgroup's 64 x BN accumulator (rows row_base.., columns n0..):
/// into C, whose rows are ldc elements apart (ldc >= N; columns beyond N are not touched), or the
/// [splits][M][N] f32 workspace.
template <bool BIAS, bool SILU, int kAcc, typename T>
__device__ __forceinline__ void store_accumulators(const float (&acc)[kAcc], T* __restrict__ C,
                                                   float* __restrict__ workspace, const T* __restrict__ bias,
                                                   int M, int N, int ldc, int row_base, int n0, int wt,
                                                   int splits) {
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
  const bool c_pairs = (ldc % 2 == 0) && ((reinterpret_cast<unsigned long long>(C) & 3ull) == 0);
#pragma unroll
  for (int i = 0; i < kAcc; i += 2) {
    const int row = row_base + acc_row(wt, i);
    const int col = n0 + acc_col(wt, i);
    if (row >= M || col >= N) continue;
    const bool second = col + 1 < N;
    const float v0 = ktune_gemm::epilogue<BIAS, SILU>(acc[i], bias, col);
    const float v1 = second ? ktune_gemm::epilogue<BIAS, SILU>(acc[i + 1], bias, col + 1) : 0.0f;
    const size_t idx = static_cast<size_t>(row) * ldc + col;
    if (second && c_pairs) {
      typename Pair2<T>::type pair;
      pair.x = ktune_dev::from_f32<T>(v0);
      pair.y = ktune_dev::from_f32<T>(v1);
      *reinterpret_cast<typename Pair2<T>::type*>(C + idx) = pair;
    } else {
      C[idx] = ktune_dev::from_f32<T>(v0);
      if (second) C[idx + 1] = ktune_dev::from_f32<T>(v1);
    }
  }
}

}  // namespace ktune_wgmma
