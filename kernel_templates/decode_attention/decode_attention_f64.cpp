#include "kernel_templates/decode_attention/decode_attention_f64.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ktune/error.hpp"

namespace ktune::kernel_templates {

std::vector<double> decode_attention_f64(std::span<const double> q, std::span<const double> k,
                                         std::span<const double> v, std::span<const int32_t> context_lens,
                                         const DecodeAttentionShape& s, double scale,
                                         std::span<const int32_t> block_table) {
  const auto bad = [](const std::string& why) {
    throw Error(ErrorKind::kBadInput, "decode_attention_f64: " + why);
  };
  if (s.batch < 1 || s.heads_q < 1 || s.heads_kv < 1 || s.seq < 1 || s.head_dim < 1) bad("non-positive size");
  if (s.heads_q % s.heads_kv != 0) bad("heads_q is not a multiple of heads_kv");
  const bool paged = s.block_size > 0;
  if (!paged && s.seq > s.seq_max) bad("seq exceeds seq_max");
  if (paged && (s.max_blocks * s.block_size < s.seq || s.num_blocks < 1 ||
                block_table.size() != static_cast<std::size_t>(s.batch * s.max_blocks)))
    bad("paged geometry: the block table must hold max_blocks >= seq / block_size a sequence");
  const auto d = static_cast<std::size_t>(s.head_dim);
  const std::size_t kv_elems = static_cast<std::size_t>(paged ? s.num_blocks * s.heads_kv * s.block_size
                                                              : s.batch * s.heads_kv * s.seq_max) *
                               d;
  // Element 0 of key t of K/V head hk of sequence b.
  const auto key_at = [&](int64_t b, int64_t hk, int64_t t) -> std::size_t {
    if (!paged) return static_cast<std::size_t>(((b * s.heads_kv + hk) * s.seq_max + t)) * d;
    auto id =
        static_cast<uint32_t>(block_table[static_cast<std::size_t>(b * s.max_blocks + t / s.block_size)]);
    if (id >= static_cast<uint32_t>(s.num_blocks)) id = 0;
    return static_cast<std::size_t>((id * s.heads_kv + hk) * s.block_size + t % s.block_size) * d;
  };
  if (q.size() != static_cast<std::size_t>(s.batch * s.heads_q) * d) bad("q size");
  if (k.size() != kv_elems || v.size() != kv_elems) bad("k / v size");
  if (!context_lens.empty() && context_lens.size() != static_cast<std::size_t>(s.batch))
    bad("context_lens size");
  const int64_t group = s.heads_q / s.heads_kv;
  std::vector<double> o(q.size(), 0.0);
  std::vector<double> scores;
  for (int64_t b = 0; b < s.batch; ++b) {
    const int64_t len = context_lens.empty()
                            ? s.seq
                            : std::clamp<int64_t>(context_lens[static_cast<std::size_t>(b)], 0, s.seq);
    for (int64_t h = 0; h < s.heads_q; ++h) {
      const std::size_t row = static_cast<std::size_t>(b * s.heads_q + h);
      scores.assign(static_cast<std::size_t>(len), 0.0);
      double big = -std::numeric_limits<double>::infinity();
      for (int64_t t = 0; t < len; ++t) {
        double dot = 0;
        for (std::size_t i = 0; i < d; ++i) dot += q[row * d + i] * k[key_at(b, h / group, t) + i];
        scores[static_cast<std::size_t>(t)] = scale * dot;
        big = std::max(big, scale * dot);
      }
      double sum = 0;
      for (double& x : scores) {
        x = std::exp(x - big);
        sum += x;
      }
      for (int64_t t = 0; t < len; ++t) {
        const double p = scores[static_cast<std::size_t>(t)] / sum;
        for (std::size_t i = 0; i < d; ++i) o[row * d + i] += p * v[key_at(b, h / group, t) + i];
      }
    }
  }
  return o;
}

}  // namespace ktune::kernel_templates
