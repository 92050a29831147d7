// rmsnorm / reference: the GPU reference that verifies every rmsnorm candidate. Deliberately plain:
// one warp a row, lanes strided over the columns, f32 accumulation, f32 outputs (y_ref and, with
// RESIDUAL, residual_ref = T(x + residual) as f32). It is itself checked against the CPU float64
// reference (kernel_templates/reference_ops.cpp) in the gpu tests.
#include "ktune_device.cuh"

template <typename T, bool RESIDUAL>
__global__ void __launch_bounds__(128)
    ktune_rmsnorm_reference(const T* __restrict__ x, const T* __restrict__ residual, const T* __restrict__ w,
                            float* __restrict__ y_ref, float* __restrict__ residual_ref, int rows, int hidden,
                            float eps) {
  using ktune_dev::from_f32;
  using ktune_dev::to_f32;
  const int row = static_cast<int>(blockIdx.x) * 4 + static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  // Rows past the end do no work but still take part in the shuffles.
  const int len = row < rows ? hidden : 0;
  const size_t base = static_cast<size_t>(row < rows ? row : 0) * static_cast<size_t>(hidden);
  float ss = 0.0f;
  for (int i = lane; i < len; i += 32) {
    float v = to_f32<T>(x[base + i]);
    if (RESIDUAL) {
      v = to_f32<T>(from_f32<T>(v + to_f32<T>(residual[base + i])));
      residual_ref[base + i] = v;
    }
    ss += v * v;
  }
  for (int off = 16; off > 0; off /= 2) ss += __shfl_xor_sync(0xffffffffu, ss, off);
  const float inv = 1.0f / sqrtf(ss / static_cast<float>(hidden) + eps);
  for (int i = lane; i < len; i += 32) {
    float v = to_f32<T>(x[base + i]);
    if (RESIDUAL) v = to_f32<T>(from_f32<T>(v + to_f32<T>(residual[base + i])));
    y_ref[base + i] = v * inv * to_f32<T>(w[i]);
  }
}
