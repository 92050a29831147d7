// gemm / mma_cluster: the tensor-core GEMM of gemm_mma.cu with K split over the SPLIT_K blocks of one
// thread block cluster (sm_90), reduced through distributed shared memory: one launch, no global
// workspace, deterministic.
//
// Grid (tiles, 1, SPLIT_K), cluster (1, 1, SPLIT_K): the blocks of a cluster share one BM x BN tile
// of C and take ceil(slices / SPLIT_K) of its BK-wide K slices each (the last ones possibly none),
// through gemm_mma_mainloop.cuh. Each block then writes its f32 partial tile into its own shared
// memory (rows padded by 8 floats: the accumulator stores are conflict-free) and, after a cluster
// barrier, block r sums 1/SPLIT_K of the tile's elements over the cluster's partials in rank order
// 0..SPLIT_K-1 (bit-identical results over runs), 16 bytes a read, applies the epilogue (BIAS:
// + bias[n], SILU: x / (1 + e^-x)) and stores C. A second cluster barrier keeps every block's
// shared memory alive until the cluster's reads are done. What split-K costs beyond the GEMM is two
// cluster barriers and BM x BN x SPLIT_K f32 reads of on-chip memory, instead of a workspace round
// trip through L2 and a second launch.
//
// Row strides as gemm_mma.cu (lda, ldb, ldc elements). C is stored 8 bytes (4 elements) at a time
// where the row segment is in bounds, C 8-byte aligned and ldc % 4 == 0; else element by element.
#include "cluster.cuh"
#include "gemm_epilogue.cuh"
#include "gemm_mma_mainloop.cuh"
#include "gemm_mma_primitives.cuh"
#include "ktune_device.cuh"

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int SPLIT_K, int SWIZZLE, typename T, bool B_NT,
          bool BIAS, bool SILU>
__global__ void __cluster_dims__(1, 1, SPLIT_K) __launch_bounds__(WM* WN * 32)
    ktune_gemm_mma_cluster(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                           const T* __restrict__ bias, int M, int N, int K, int lda, int ldb, int ldc) {
  using namespace ktune_dev;
  using namespace ktune_mma;
  constexpr int kThreads = WM * WN * 32;
  constexpr int WTM = BM / WM;
  constexpr int WTN = BN / WN;
  constexpr int MI = WTM / 16;
  constexpr int NI = WTN / 8;
  constexpr int LDP = BN + 8;  // floats a row of the partial tile
  constexpr int kQuads = BM * BN / 4;
  static_assert(SPLIT_K >= 2 && SPLIT_K <= 8, "SPLIT_K: 2..8 blocks a cluster (the portable size)");
  static_assert(kQuads % SPLIT_K == 0, "the tile divides evenly over the cluster");
  static_assert(SWIZZLE >= 1, "SWIZZLE >= 1");
  extern __shared__ __align__(128) unsigned char ktune_smem[];
  const int tid = threadIdx.x;
  const int tiles_m = (M + BM - 1) / BM;
  const int tiles_n = (N + BN - 1) / BN;
  int tm = 0;
  int tn = 0;
  block_coords<SWIZZLE>(static_cast<int>(blockIdx.x), tiles_m, tiles_n, tm, tn);
  const int m0 = tm * BM;
  const int n0 = tn * BN;
  const int rank = blockIdx.z;  // cluster (1, 1, SPLIT_K) over grid.z == SPLIT_K: the cluster rank
  const int k_tiles = (K + BK - 1) / BK;
  const int tiles_per_split = (k_tiles + SPLIT_K - 1) / SPLIT_K;
  const int t_begin = rank * tiles_per_split;
  const int t_end = min(k_tiles, t_begin + tiles_per_split);
  const int n_tiles = t_end > t_begin ? t_end - t_begin : 0;

  float acc[MI][NI][4];
  mma_tile_mainloop<BM, BN, BK, WM, WN, STAGES, T, B_NT>(A, B, M, N, K, lda, ldb, m0, n0, t_begin, n_tiles,
                                                         ktune_smem, acc);
  __syncthreads();  // every warp is done with the pipeline's shared memory

  float* const part = reinterpret_cast<float*>(ktune_smem);
  const int lane = tid % 32;
  const int warp_m = (tid / 32) / WN;
  const int warp_n = (tid / 32) % WN;
#pragma unroll
  for (int i = 0; i < MI; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = warp_m * WTM + i * 16 + h * 8 + (lane >> 2);
#pragma unroll
      for (int j = 0; j < NI; ++j) {
        const int c = warp_n * WTN + j * 8 + 2 * (lane & 3);
        *reinterpret_cast<float2*>(part + r * LDP + c) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
      }
    }
  }
  ktune_cluster::cluster_sync();  // every partial tile of the cluster is written and visible

  const bool c_quads = (ldc % 4 == 0) && ((reinterpret_cast<unsigned long long>(C) & 7ull) == 0);
  constexpr int kPerRank = kQuads / SPLIT_K;
  for (int q = rank * kPerRank + tid; q < (rank + 1) * kPerRank; q += kThreads) {
    const int r = q / (BN / 4);
    const int c = (q % (BN / 4)) * 4;
    const int row = m0 + r;
    const int col = n0 + c;
    float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int p = 0; p < SPLIT_K; ++p) {
      const float4 v = ktune_cluster::load_remote4(part + r * LDP + c, static_cast<unsigned>(p));
      s.x += v.x;
      s.y += v.y;
      s.z += v.z;
      s.w += v.w;
    }
    if (row >= M || col >= N) continue;
    const float out[4] = {s.x, s.y, s.z, s.w};
    T* const dst = C + static_cast<size_t>(row) * ldc + col;
    if (c_quads && col + 3 < N) {
      union {
        typename Pair<T>::type pairs[2];
        uint2 bits;
      } quad;
      quad.pairs[0].x = from_f32<T>(ktune_gemm::epilogue<BIAS, SILU>(out[0], bias, col));
      quad.pairs[0].y = from_f32<T>(ktune_gemm::epilogue<BIAS, SILU>(out[1], bias, col + 1));
      quad.pairs[1].x = from_f32<T>(ktune_gemm::epilogue<BIAS, SILU>(out[2], bias, col + 2));
      quad.pairs[1].y = from_f32<T>(ktune_gemm::epilogue<BIAS, SILU>(out[3], bias, col + 3));
      *reinterpret_cast<uint2*>(dst) = quad.bits;
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        if (col + e < N) dst[e] = from_f32<T>(ktune_gemm::epilogue<BIAS, SILU>(out[e], bias, col + e));
      }
    }
  }
  ktune_cluster::cluster_sync();  // no block leaves while another still reads its shared memory
}
