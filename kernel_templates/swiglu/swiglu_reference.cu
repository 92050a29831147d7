// swiglu / reference: the GPU reference of every swiglu candidate. Deliberately plain: one thread
// an output element, expf, f32 output out_ref. Same layouts as swiglu.cu. Checked against the CPU
// float64 reference in the gpu tests.
#include "ktune_device.cuh"

template <typename T, bool SPLIT>
__global__ void __launch_bounds__(256)
    ktune_swiglu_reference(const T* __restrict__ a, const T* __restrict__ b, float* __restrict__ out_ref,
                           int rows, int inter) {
  using ktune_dev::to_f32;
  const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<long long>(rows) * inter) return;
  const long long r = idx / inter;
  const long long j = idx % inter;
  const float g = SPLIT ? to_f32<T>(a[idx]) : to_f32<T>(a[r * 2 * inter + j]);
  const float u = SPLIT ? to_f32<T>(b[idx]) : to_f32<T>(a[r * 2 * inter + inter + j]);
  out_ref[idx] = g / (1.0f + expf(-g)) * u;
}
