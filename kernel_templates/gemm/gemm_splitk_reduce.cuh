// The deterministic split-K reduction shared by the gemm templates: splits are summed in order
// 0..splits-1 for every element, so repeated runs give bit-identical results.
#pragma once

#include "ktune_device.cuh"

/// C[i] = sum over s of workspace[s][i], s in order 0..splits-1 (deterministic), for i < mn.
template <typename T>
__global__ void ktune_gemm_splitk_reduce(const float* __restrict__ workspace, T* __restrict__ C, long long mn,
                                         int splits) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < mn; i += stride) {
    float s = 0.0f;
    for (int p = 0; p < splits; ++p) s += workspace[p * mn + i];
    C[i] = ktune_dev::from_f32<T>(s);
  }
}
