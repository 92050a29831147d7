// gemm / reference with an epilogue: verifies gemm candidates of problems with a bias and/or SiLU
// ("nt+bias+silu" layouts, gemm_mma_spec.hpp). Deliberately plain and independent of the
// candidates: one thread per element of C, a k loop over global memory, f32 accumulation in k order,
// then + bias[n], then x / (1 + exp(-x)) with expf, f32 output. Checked against the CPU float64
// reference (MmaGemmSpec::cpu_reference) in the gpu tests.
#include "ktune_device.cuh"

template <typename T, bool B_NT, bool BIAS, bool SILU>
__global__ void __launch_bounds__(256)
    ktune_gemm_reference_epilogue(const T* __restrict__ A, const T* __restrict__ B, const T* __restrict__ bias,
                                  float* __restrict__ C_ref, int M, int N, int K) {
  using ktune_dev::to_f32;
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  const int m = blockIdx.y * blockDim.y + threadIdx.y;
  if (m >= M || n >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) {
    const float b = B_NT ? to_f32(B[static_cast<size_t>(n) * K + k]) : to_f32(B[static_cast<size_t>(k) * N + n]);
    acc = fmaf(to_f32(A[static_cast<size_t>(m) * K + k]), b, acc);
  }
  if (BIAS) acc += to_f32(bias[n]);
  if (SILU) acc = acc / (1.0f + expf(-acc));
  C_ref[static_cast<size_t>(m) * N + n] = acc;
}
