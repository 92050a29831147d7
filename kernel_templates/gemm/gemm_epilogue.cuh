// The epilogue every gemm template applies when its problem's layout asks for one ("nt+bias",
// "nn+silu", "nt+bias+silu", ...): bias (one value per column n) then SiLU, in f32 before rounding to
// the output dtype. Also the kernels that finish a split-K GEMM with an epilogue (the deterministic
// sum of the f32 slices, or the atomic f32 sum converted) and zero the atomic variant's workspace.
#pragma once

#include "ktune_device.cuh"

namespace ktune_gemm {

/// silu(v + bias[col]) with each part present only when asked for.
template <bool BIAS, bool SILU, typename T>
__device__ __forceinline__ float epilogue(float v, const T* __restrict__ bias, int col) {
  if (BIAS) v += ktune_dev::to_f32(bias[col]);
  if (SILU) v = v / (1.0f + __expf(-v));
  return v;
}

}  // namespace ktune_gemm

/// C[m][n] = epilogue(sum over s of workspace[s][m][n]), s in order 0..splits-1 (deterministic), for
/// m < M, n < N: the workspace is [splits][M][N], contiguous; C's rows are ldc elements apart (ldc >=
/// N, a strided view; its columns beyond N are not touched). With splits 1 it converts the atomic
/// variant's f32 sums.
template <typename T, bool BIAS, bool SILU>
__global__ void ktune_gemm_finish(const float* __restrict__ workspace, T* __restrict__ C,
                                  const T* __restrict__ bias, int M, int N, int ldc, int splits) {
  const long long mn = static_cast<long long>(M) * N;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < mn; i += stride) {
    float s = 0.0f;
    for (int p = 0; p < splits; ++p) s += workspace[p * mn + i];
    const long long row = i / N;
    const int col = static_cast<int>(i - row * N);
    C[row * ldc + col] = ktune_dev::from_f32<T>(ktune_gemm::epilogue<BIAS, SILU>(s, bias, col));
  }
}

/// workspace[0..count) = 0 (the atomic split-K variant accumulates into it); W is float.
template <typename W>
__global__ void ktune_gemm_zero(W* __restrict__ workspace, long long count) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    workspace[i] = W(0);
  }
}
