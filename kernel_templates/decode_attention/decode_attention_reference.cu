// decode_attention / reference: the GPU reference of every decode_attention candidate. Deliberately
// plain and without splits: a block of 128 threads a (query head, sequence); a thread a key writes
// its score scale * q . k (f32, natural base) to the f32 scratch `scores` [batch, heads_q, seq],
// then block-wide max and sum (thread 0 adds the 128 partials in order), then a thread an output
// element sums exp(score - max) * v over the whole context. Output o_ref f32. Same definitions as
// decode_attention.cu (context_lens clamped to [0, seq], len 0 gives 0), contiguous or paged. Checked against the CPU
// float64 reference in the gpu tests.
#include "ops_reduce.cuh"

template <int D, typename T>
__global__ void __launch_bounds__(128)
    ktune_decode_attention_reference(const T* __restrict__ q, const T* __restrict__ k,
                                     const T* __restrict__ v, float* __restrict__ o_ref,
                                     float* __restrict__ scores, const int* __restrict__ context_lens,
                                     int heads_q, int heads_kv, int seq, int seq_max, float scale,
                                     const int* __restrict__ block_table, int block_size, int max_blocks,
                                     int num_blocks) {
  using ktune_dev::to_f32;
  __shared__ float partial[128];
  __shared__ float total;
  const int h = static_cast<int>(blockIdx.x);
  const int b = static_cast<int>(blockIdx.y);
  const int tid = static_cast<int>(threadIdx.x);
  const int hk = h / (heads_q / heads_kv);
  int len = seq;
  if (context_lens != nullptr) len = min(max(context_lens[b], 0), seq);
  const size_t row = static_cast<size_t>(b) * heads_q + h;
  const T* qh = q + row * D;
  const size_t base = (static_cast<size_t>(b) * heads_kv + hk) * static_cast<size_t>(seq_max) * D;
  float* sc = scores + row * static_cast<size_t>(seq);
  // Element 0 of key t: contiguous, or (block_table given) row t % block_size of its block (an id
  // outside [0, num_blocks) reads block 0, as the templates do).
  auto key_at = [&](int t) -> size_t {
    if (block_table == nullptr) return base + static_cast<size_t>(t) * D;
    unsigned id = static_cast<unsigned>(block_table[static_cast<size_t>(b) * max_blocks + t / block_size]);
    if (id >= static_cast<unsigned>(num_blocks)) id = 0u;
    return ((static_cast<size_t>(id) * heads_kv + hk) * block_size + t % block_size) * D;
  };

  float m = ktune_ops::neg_inf();
  for (int t = tid; t < len; t += 128) {
    float s = 0.0f;
    for (int d = 0; d < D; ++d) s += to_f32<T>(qh[d]) * to_f32<T>(k[key_at(t) + d]);
    s *= scale;
    sc[t] = s;
    m = fmaxf(m, s);
  }
  partial[tid] = m;
  __syncthreads();  // also makes every score visible to the block
  if (tid == 0) {
    float big = partial[0];
    for (int i = 1; i < 128; ++i) big = fmaxf(big, partial[i]);
    total = big;
  }
  __syncthreads();
  const float big = total;
  float sum = 0.0f;
  for (int t = tid; t < len; t += 128) sum += expf(sc[t] - big);
  __syncthreads();  // every thread has read `total`
  partial[tid] = sum;
  __syncthreads();
  if (tid == 0) {
    float s = 0.0f;
    for (int i = 0; i < 128; ++i) s += partial[i];
    total = s;
  }
  __syncthreads();
  const float l = total;
  for (int d = tid; d < D; d += 128) {
    float a = 0.0f;
    for (int t = 0; t < len; ++t)
      a += expf(sc[t] - big) * to_f32<T>(v[key_at(t) + d]);
    o_ref[row * D + d] = len > 0 ? a / l : 0.0f;
  }
}
