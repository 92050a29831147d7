#include "kernel_templates/rope_append/rope_append_f64.hpp"

#include <cmath>
#include <string>

#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw Error(ErrorKind::kBadInput, "rope_append reference: " + what);
}

/// x (one head, already normalised) rotated in place over its first rot_dim elements.
void rotate(double* x, const double* cs, int64_t rot_dim, RopeStyle style) {
  const int64_t half = rot_dim / 2;
  for (int64_t j = 0; j < half; ++j) {
    const int64_t ia = style == RopeStyle::kGptj ? 2 * j : j;
    const int64_t ib = style == RopeStyle::kGptj ? 2 * j + 1 : j + half;
    const double a = x[ia];
    const double b = x[ib];
    x[ia] = a * cs[j] - b * cs[half + j];
    x[ib] = b * cs[j] + a * cs[half + j];
  }
}

/// One head of `src` normalised with `w` (when not empty) into `out`.
void normalised(const double* src, std::span<const double> w, int64_t d, double eps, double* out) {
  double inv = 1.0;
  if (!w.empty()) {
    double ss = 0;
    for (int64_t i = 0; i < d; ++i) ss += src[i] * src[i];
    inv = 1.0 / std::sqrt(ss / static_cast<double>(d) + eps);
  }
  for (int64_t i = 0; i < d; ++i) out[i] = src[i] * (w.empty() ? 1.0 : inv * w[static_cast<std::size_t>(i)]);
}

}  // namespace

std::vector<double> rope_append_f64(const RopeAppendInputs& in, const KvCacheGeometry& cache,
                                    std::vector<double>& k_cache, std::vector<double>& v_cache) {
  const int64_t d = in.head_dim;
  const int64_t r = in.rot_dim;
  require(r >= 2 && r % 2 == 0 && r <= d, "rot_dim must be even and within head_dim");
  require(static_cast<int64_t>(in.q.size()) == in.tokens * in.heads_q * d, "q size");
  require(static_cast<int64_t>(in.k.size()) == in.tokens * in.heads_kv * d, "k size");
  require(static_cast<int64_t>(in.v.size()) == in.tokens * in.heads_kv * d, "v size");
  require(in.q_weight.empty() == in.k_weight.empty(), "both weights or neither");
  require(in.q_weight.empty() || static_cast<int64_t>(in.q_weight.size()) == d, "q_weight size");
  require(in.k_weight.empty() || static_cast<int64_t>(in.k_weight.size()) == d, "k_weight size");
  require(static_cast<int64_t>(in.positions.size()) == in.tokens, "one position a token");
  require(!in.cos_sin.empty() && in.cos_sin.size() % static_cast<std::size_t>(r) == 0, "cos_sin size");
  require(cache.seq_tokens >= 1 && cache.cache_rows >= 1 && cache.max_blocks >= 1, "cache geometry");
  const auto max_pos = static_cast<uint32_t>(in.cos_sin.size() / static_cast<std::size_t>(r));
  const auto rows = static_cast<uint32_t>(cache.cache_rows);

  std::vector<double> q_out(in.q.size());
  std::vector<double> head(static_cast<std::size_t>(d));
  for (int64_t t = 0; t < in.tokens; ++t) {
    const auto p = static_cast<uint32_t>(in.positions[static_cast<std::size_t>(t)]);
    const double* cs =
        in.cos_sin.data() + static_cast<std::size_t>(p % max_pos) * static_cast<std::size_t>(r);
    for (int64_t h = 0; h < in.heads_q; ++h) {
      double* out = q_out.data() + (t * in.heads_q + h) * d;
      normalised(in.q.data() + (t * in.heads_q + h) * d, in.q_weight, d, in.eps, out);
      rotate(out, cs, r, in.style);
    }
    const int64_t seq = t / cache.seq_tokens;
    int64_t block = seq;
    if (cache.paged) {
      const uint32_t logical = (p / rows) % static_cast<uint32_t>(cache.max_blocks);
      const auto index = static_cast<std::size_t>(seq * cache.max_blocks + logical);
      require(index < in.block_table.size(), "block table too short for the tokens");
      const auto id = static_cast<uint32_t>(in.block_table[index]);
      if (id >= static_cast<uint32_t>(cache.num_blocks)) continue;  // writes nothing
      block = id;
    }
    for (int64_t h = 0; h < in.heads_kv; ++h) {
      const auto row =
          static_cast<std::size_t>(((block * in.heads_kv + h) * cache.cache_rows + p % rows) * d);
      require(row + static_cast<std::size_t>(d) <= k_cache.size() &&
                  row + static_cast<std::size_t>(d) <= v_cache.size(),
              "the cache is smaller than the geometry addresses");
      normalised(in.k.data() + (t * in.heads_kv + h) * d, in.k_weight, d, in.eps, head.data());
      rotate(head.data(), cs, r, in.style);
      for (int64_t i = 0; i < d; ++i) {
        k_cache[row + static_cast<std::size_t>(i)] = head[static_cast<std::size_t>(i)];
        v_cache[row + static_cast<std::size_t>(i)] =
            in.v[static_cast<std::size_t>((t * in.heads_kv + h) * d + i)];
      }
    }
  }
  return q_out;
}

}  // namespace ktune::kernel_templates
