// gemm / reference: the GPU reference that verifies every gemm candidate. Deliberately plain: one
// thread per element of C, 16 x 16 tiles staged through shared memory, f32 accumulation in k order,
// f32 output (the candidate's output is compared against it with the dtype's tolerance). It is itself
// checked against the CPU float64 reference (kernel_templates/reference_gemm.cpp) in the gpu tests.
#include "ktune_device.cuh"

template <typename T, bool B_NT>
__global__ void __launch_bounds__(256) ktune_gemm_reference(const T* __restrict__ A, const T* __restrict__ B,
                                                            float* __restrict__ C_ref, int M, int N, int K) {
  using ktune_dev::to_f32;
  constexpr int kTile = 16;
  __shared__ float as[kTile][kTile + 1];  // as[m][k]
  __shared__ float bs[kTile][kTile + 1];  // bs[k][n]
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int m = blockIdx.y * kTile + ty;
  const int n = blockIdx.x * kTile + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    as[ty][tx] = (m < M && k0 + tx < K) ? to_f32(A[static_cast<size_t>(m) * K + k0 + tx]) : 0.0f;
    if (B_NT) {
      // B[n][k]: threads of a row read consecutive k.
      const int bn = blockIdx.x * kTile + ty;
      bs[tx][ty] = (bn < N && k0 + tx < K) ? to_f32(B[static_cast<size_t>(bn) * K + k0 + tx]) : 0.0f;
    } else {
      bs[ty][tx] = (n < N && k0 + ty < K) ? to_f32(B[static_cast<size_t>(k0 + ty) * N + n]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) acc = fmaf(as[ty][kk], bs[kk][tx], acc);
    __syncthreads();
  }
  if (m < M && n < N) C_ref[static_cast<size_t>(m) * N + n] = acc;
}
