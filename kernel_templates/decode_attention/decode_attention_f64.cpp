#include "kernel_templates/decode_attention/decode_attention_f64.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ktune/error.hpp"

namespace ktune::kernel_templates {

std::vector<double> decode_attention_f64(std::span<const double> q, std::span<const double> k,
                                         std::span<const double> v, std::span<const int32_t> context_lens,
                                         const DecodeAttentionShape& s, double scale) {
  const auto bad = [](const std::string& why) {
    throw Error(ErrorKind::kBadInput, "decode_attention_f64: " + why);
  };
  if (s.batch < 1 || s.heads_q < 1 || s.heads_kv < 1 || s.seq < 1 || s.head_dim < 1) bad("non-positive size");
  if (s.heads_q % s.heads_kv != 0) bad("heads_q is not a multiple of heads_kv");
  if (s.seq > s.seq_max) bad("seq exceeds seq_max");
  const auto d = static_cast<std::size_t>(s.head_dim);
  const std::size_t kv_elems = static_cast<std::size_t>(s.batch * s.heads_kv * s.seq_max) * d;
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
      const std::size_t base = static_cast<std::size_t>((b * s.heads_kv + h / group) * s.seq_max) * d;
      scores.assign(static_cast<std::size_t>(len), 0.0);
      double big = -std::numeric_limits<double>::infinity();
      for (int64_t t = 0; t < len; ++t) {
        double dot = 0;
        for (std::size_t i = 0; i < d; ++i)
          dot += q[row * d + i] * k[base + static_cast<std::size_t>(t) * d + i];
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
        for (std::size_t i = 0; i < d; ++i)
          o[row * d + i] += p * v[base + static_cast<std::size_t>(t) * d + i];
      }
    }
  }
  return o;
}

}  // namespace ktune::kernel_templates
