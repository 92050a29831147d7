// The deterministic split-K reduction shared by the gemm templates: splits are summed in order
// 0..splits-1 for every element, so repeated runs give bit-identical results.
#pragma once

#include "ktune_device.cuh"

/// C[m][n] = sum over s of workspace[s][m][n], s in order 0..splits-1 (deterministic), for m < M,
/// n < N. The workspace is [splits][M][N], contiguous; C's rows are ldc elements apart (ldc >= N:
/// a strided view, e.g. a column slice of a wider output; its columns beyond N are not touched).
template <typename T>
__global__ void ktune_gemm_splitk_reduce(const float* __restrict__ workspace, T* __restrict__ C, int M, int N,
                                         int ldc, int splits) {
  const long long mn = static_cast<long long>(M) * N;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < mn; i += stride) {
    float s = 0.0f;
    for (int p = 0; p < splits; ++p) s += workspace[p * mn + i];
    // Element (i / N, i % N) of C: i itself when contiguous, else i + row * (ldc - N).
    const long long at = ldc == N ? i : i + (i / N) * (ldc - N);
    C[at] = ktune_dev::from_f32<T>(s);
  }
}
