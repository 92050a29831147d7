#pragma once
/// CPU float64 reference of `decode_attention` (D4): the definition the template and its GPU
/// reference are checked against. Inputs are the values the device sees (already rounded to bf16);
/// nothing is rounded here. Meant for small shapes.

#include <cstdint>
#include <span>
#include <vector>

namespace ktune::kernel_templates {

/// Shape of one decode-attention call: q [batch, heads_q, head_dim], k and v [batch, heads_kv,
/// seq_max, head_dim], the context of sequence b its first len(b) keys (len = seq, or
/// context_lens[b] clamped to [0, seq] when context_lens is not empty).
struct DecodeAttentionShape {
  int64_t batch = 0;
  int64_t heads_q = 0;
  int64_t heads_kv = 0;
  int64_t seq = 0;
  int64_t seq_max = 0;
  int64_t head_dim = 0;
  /// Paged (block_size > 0): k and v are [num_blocks, heads_kv, block_size, head_dim] and key t of
  /// sequence b is row t % block_size of block block_table[b * max_blocks + t / block_size] (an id
  /// outside [0, num_blocks) reads block 0, as the kernels do); seq_max is then unused.
  int64_t block_size = 0;
  int64_t max_blocks = 0;
  int64_t num_blocks = 0;
};

/// o[b, h] = sum_t softmax_t(scale * q[b, h] . k[b, h / group, t]) v[b, h / group, t] over
/// t < len(b), group = heads_q / heads_kv; a sequence with len 0 gives 0. Returns o [batch, heads_q,
/// head_dim]. Throws ktune::Error(kBadInput) on inconsistent sizes (heads_q not a multiple of
/// heads_kv, seq > seq_max, tensor sizes).
std::vector<double> decode_attention_f64(std::span<const double> q, std::span<const double> k,
                                         std::span<const double> v, std::span<const int32_t> context_lens,
                                         const DecodeAttentionShape& shape, double scale,
                                         std::span<const int32_t> block_table = {});

}  // namespace ktune::kernel_templates
