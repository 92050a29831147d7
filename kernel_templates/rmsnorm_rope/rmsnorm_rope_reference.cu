// rmsnorm_rope / reference: the GPU reference of every rmsnorm_rope candidate. Deliberately plain:
// one thread per (token, head), serial over the head, f32, f32 outputs q_ref and k_ref. Same
// definitions as rmsnorm_rope.cu (positions modulo max_pos, cos at [p][j], sin at [p][D/2 + j]).
// Checked against the CPU float64 reference (reference_ops.cpp) in the gpu tests.
#include "ktune_device.cuh"

template <typename T, bool GPTJ>
__global__ void __launch_bounds__(128)
    ktune_rmsnorm_rope_reference(const T* __restrict__ q, const T* __restrict__ k,
                                 const T* __restrict__ q_weight, const T* __restrict__ k_weight,
                                 const float* __restrict__ cos_sin, const int* __restrict__ positions,
                                 float* __restrict__ q_ref, float* __restrict__ k_ref, int tokens,
                                 int heads_q, int heads_kv, int head_dim, int max_pos, float eps) {
  using ktune_dev::to_f32;
  const int heads = heads_q + heads_kv;
  const long long item = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= static_cast<long long>(tokens) * heads) return;
  const int token = static_cast<int>(item / heads);
  const int h = static_cast<int>(item % heads);
  const bool is_q = h < heads_q;
  const size_t row = is_q ? (static_cast<size_t>(token) * heads_q + h)
                          : (static_cast<size_t>(token) * heads_kv + (h - heads_q));
  const T* src = (is_q ? q : k) + row * head_dim;
  float* dst = (is_q ? q_ref : k_ref) + row * head_dim;
  const T* w = is_q ? q_weight : k_weight;
  float ss = 0.0f;
  for (int i = 0; i < head_dim; ++i) ss += to_f32<T>(src[i]) * to_f32<T>(src[i]);
  const float inv = 1.0f / sqrtf(ss / static_cast<float>(head_dim) + eps);
  const unsigned p = static_cast<unsigned>(positions[token]) % static_cast<unsigned>(max_pos);
  const float* cs = cos_sin + static_cast<size_t>(p) * head_dim;
  const int half = head_dim / 2;
  for (int j = 0; j < half; ++j) {
    const int ia = GPTJ ? 2 * j : j;
    const int ib = GPTJ ? 2 * j + 1 : j + half;
    const float a = to_f32<T>(src[ia]) * inv * to_f32<T>(w[ia]);
    const float b = to_f32<T>(src[ib]) * inv * to_f32<T>(w[ib]);
    dst[ia] = a * cs[j] - b * cs[half + j];
    dst[ib] = b * cs[j] + a * cs[half + j];
  }
}
