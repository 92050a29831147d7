// rope_append / reference: the GPU reference of every rope_append candidate. Deliberately plain:
// one thread per (token, head) item, serial over the head, f32, f32 outputs (q_ref, k_cache_ref,
// v_cache_ref). Same definitions as rope_append.cu (positions as unsigned, the table row modulo
// max_pos, the cache row modulo cache_rows, a paged block id outside [0, num_blocks) writes
// nothing). Checked against the CPU float64 reference (reference_ops.cpp) in the gpu tests.
#include "ktune_device.cuh"

template <typename T, bool GPTJ, bool NORM, bool PAGED>
__global__ void __launch_bounds__(128)
    ktune_rope_append_reference(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                                const T* __restrict__ q_weight, const T* __restrict__ k_weight,
                                const float* __restrict__ cos_sin, const int* __restrict__ positions,
                                const int* __restrict__ block_table, float* __restrict__ q_ref,
                                float* __restrict__ k_cache_ref, float* __restrict__ v_cache_ref, int tokens,
                                int heads_q, int heads_kv, int head_dim, int rot_dim, int seq_tokens,
                                int cache_rows, int max_blocks, int num_blocks, int max_pos, float eps) {
  using ktune_dev::to_f32;
  const int heads = heads_q + 2 * heads_kv;
  const long long item = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= static_cast<long long>(tokens) * heads) return;
  const int token = static_cast<int>(item / heads);
  const int h = static_cast<int>(item % heads);
  const unsigned p = static_cast<unsigned>(positions[token]);
  const T* src = nullptr;
  float* dst = nullptr;
  const T* w = nullptr;
  if (h < heads_q) {
    const size_t row = static_cast<size_t>(token) * heads_q + h;
    src = q + row * head_dim;
    dst = q_ref + row * head_dim;
    w = q_weight;
  } else {
    const bool is_k = h < heads_q + heads_kv;
    const int kv = is_k ? h - heads_q : h - heads_q - heads_kv;
    src = (is_k ? k : v) + (static_cast<size_t>(token) * heads_kv + kv) * head_dim;
    const unsigned seq = static_cast<unsigned>(token / seq_tokens);
    unsigned block = seq;
    if (PAGED) {
      const unsigned logical = (p / static_cast<unsigned>(cache_rows)) % static_cast<unsigned>(max_blocks);
      block = static_cast<unsigned>(block_table[static_cast<size_t>(seq) * max_blocks + logical]);
      if (block >= static_cast<unsigned>(num_blocks)) return;
    }
    const size_t row = (static_cast<size_t>(block) * heads_kv + kv) * cache_rows + p % static_cast<unsigned>(cache_rows);
    dst = (is_k ? k_cache_ref : v_cache_ref) + row * head_dim;
    if (!is_k) {
      for (int i = 0; i < head_dim; ++i) dst[i] = to_f32<T>(src[i]);
      return;
    }
    w = k_weight;
  }
  float inv = 1.0f;
  if (NORM) {
    float ss = 0.0f;
    for (int i = 0; i < head_dim; ++i) ss += to_f32<T>(src[i]) * to_f32<T>(src[i]);
    inv = 1.0f / sqrtf(ss / static_cast<float>(head_dim) + eps);
  }
  for (int i = 0; i < head_dim; ++i) dst[i] = to_f32<T>(src[i]) * (NORM ? inv * to_f32<T>(w[i]) : 1.0f);
  const float* cs = cos_sin + static_cast<size_t>(p % static_cast<unsigned>(max_pos)) * rot_dim;
  const int half = rot_dim / 2;
  for (int j = 0; j < half; ++j) {
    const int ia = GPTJ ? 2 * j : j;
    const int ib = GPTJ ? 2 * j + 1 : j + half;
    const float a = dst[ia];
    const float b = dst[ib];
    dst[ia] = a * cs[j] - b * cs[half + j];
    dst[ib] = b * cs[j] + a * cs[half + j];
  }
}
