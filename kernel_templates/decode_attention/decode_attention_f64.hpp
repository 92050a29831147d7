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
};

/// o[b, h] = sum_t softmax_t(scale * q[b, h] . k[b, h / group, t]) v[b, h / group, t] over
/// t < len(b), group = heads_q / heads_kv; a sequence with len 0 gives 0. Returns o [batch, heads_q,
/// head_dim]. Throws ktune::Error(kBadInput) on inconsistent sizes (heads_q not a multiple of
/// heads_kv, seq > seq_max, tensor sizes).
std::vector<double> decode_attention_f64(std::span<const double> q, std::span<const double> k,
                                         std::span<const double> v, std::span<const int32_t> context_lens,
                                         const DecodeAttentionShape& shape, double scale);

}  // namespace ktune::kernel_templates
