// gemm / gemv: the skinny GEMM C[M,N] = A[M,K] * W^T for M <= 16 with W [N,K] row-major ("nt", the
// nn.Linear weight layout), f32 accumulation. Memory-bound: every weight is read exactly once.
//
// Block (blockIdx.x, blockIdx.y = split) owns ROWS consecutive weight rows n and one K range of
// ceil(K / SPLIT_K) rounded up to BK. Its WARPS warps take turns over BK-wide chunks of that range;
// a lane loads BK / (32 * 16 bytes) 16-byte vectors of each of its ROWS rows (ROWS * BK * sizeof(T)
// / 32 bytes in flight per lane), then multiplies them with the matching A vectors of all MT rows
// of A (MT = M rounded up to a power of two, <= 16; rows >= M are skipped). Lane partials are summed
// by warp shuffles, warp partials through shared memory in warp order. SPLIT_K == 1 writes C;
// SPLIT_K > 1 writes workspace[split][M][N] and ktune_gemm_splitk_reduce (gemm_splitk_reduce.cuh)
// sums the splits in order: deterministic.
//
// Epilogue (BIAS: + bias[n]; SILU: x / (1 + e^-x); gemm_epilogue.cuh) in f32 before the output is
// rounded: here when SPLIT_K == 1, else in ktune_gemm_finish after the ordered sum of the splits.
//
// Row strides (elements, runtime values): A's rows are lda apart, W's ldb, C's ldc, each at least
// its row's length (strided views, e.g. a column slice of a fused projection's output); only C's
// M x N elements are written.
//
// Fast path: A and W 16-byte aligned, K, lda and ldb multiples of 16 / sizeof(T). Otherwise a scalar
// path (one element per lane, same result up to f32 rounding order) - correct for any K, stride and
// alignment.
#include "gemm_epilogue.cuh"
#include "gemm_splitk_reduce.cuh"
#include "ktune_device.cuh"

template <int BK, int SPLIT_K, int WARPS, int ROWS, int MT, typename T, bool BIAS, bool SILU>
__global__ void __launch_bounds__(WARPS * 32)
    ktune_gemv(const T* __restrict__ A, const T* __restrict__ W, T* __restrict__ C,
               float* __restrict__ workspace, const T* __restrict__ bias, int M, int N, int K, int lda,
               int ldb, int ldc) {
  using namespace ktune_dev;
  constexpr int VEC = Vec16<T>::kElems;
  constexpr int U = BK / (32 * VEC);
  static_assert(BK % (32 * VEC) == 0, "BLOCK_K must be a multiple of 32 lanes x 16 bytes");
  static_assert(MT >= 1 && MT <= 16, "gemv serves M <= 16");

  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int n0 = blockIdx.x * ROWS;
  const int split = blockIdx.y;
  const int split_len = ((K + SPLIT_K - 1) / SPLIT_K + BK - 1) / BK * BK;
  const int k_begin = min(K, split * split_len);
  const int k_end = min(K, k_begin + split_len);

  float acc[ROWS][MT];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
#pragma unroll
    for (int m = 0; m < MT; ++m) acc[r][m] = 0.0f;
  }

  const bool vec = (K % VEC == 0) && (lda % VEC == 0) && (ldb % VEC == 0) && aligned16(A) && aligned16(W);
  if (vec) {
    for (int k = k_begin + warp * BK; k < k_end; k += WARPS * BK) {
      int4 w[ROWS][U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int kk = k + (u * 32 + lane) * VEC;
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
          const bool ok = (n0 + r < N) && (kk < k_end);
          w[r][u] = ok ? __ldcs(reinterpret_cast<const int4*>(W + static_cast<size_t>(n0 + r) * ldb + kk))
                       : make_int4(0, 0, 0, 0);
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int kk = k + (u * 32 + lane) * VEC;
        if (kk >= k_end) continue;
#pragma unroll
        for (int m = 0; m < MT; ++m) {
          if (m >= M) break;
          const int4 a = __ldg(reinterpret_cast<const int4*>(A + static_cast<size_t>(m) * lda + kk));
#pragma unroll
          for (int r = 0; r < ROWS; ++r) acc[r][m] += dot16<T>(w[r][u], a);
        }
      }
    }
  } else {
    for (int k = k_begin + threadIdx.x; k < k_end; k += WARPS * 32) {
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        if (n0 + r >= N) break;
        const float w = to_f32(W[static_cast<size_t>(n0 + r) * ldb + k]);
#pragma unroll
        for (int m = 0; m < MT; ++m) {
          if (m >= M) break;
          acc[r][m] = fmaf(w, to_f32(A[static_cast<size_t>(m) * lda + k]), acc[r][m]);
        }
      }
    }
  }

  __shared__ float partial[WARPS][ROWS * MT];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      float v = acc[r][m];
#pragma unroll
      for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
      if (lane == 0) partial[warp][r * MT + m] = v;
    }
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < ROWS * MT; idx += WARPS * 32) {
    const int r = idx / MT;
    const int m = idx % MT;
    const int n = n0 + r;
    if (m >= M || n >= N) continue;
    float s = 0.0f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) s += partial[w][idx];
    if (SPLIT_K == 1) {
      C[static_cast<size_t>(m) * ldc + n] = from_f32<T>(ktune_gemm::epilogue<BIAS, SILU>(s, bias, n));
    } else {
      workspace[(static_cast<size_t>(split) * M + m) * N + n] = s;
    }
  }
}
