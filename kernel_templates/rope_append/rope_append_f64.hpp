#pragma once
/// The CPU float64 reference of rope_append (rope_append.cu): q and k rotated (after a per-head
/// RMSNorm when weights are given), k and v written into the KV cache at each token's position.
/// The definition the template and its GPU reference are checked against (D4); small shapes only.

#include <cstdint>
#include <span>
#include <vector>

#include "kernel_templates/reference_ops.hpp"

namespace ktune::kernel_templates {

/// Where rope_append writes k and v: token t belongs to sequence t / seq_tokens; its row in the
/// cache is position modulo cache_rows (as unsigned 32-bit), in block `sequence` (contiguous) or
/// block_table[sequence * max_blocks + (position / cache_rows) modulo max_blocks] (paged; a block id
/// outside [0, num_blocks) writes nothing). A block is [heads_kv, cache_rows, head_dim].
struct KvCacheGeometry {
  int64_t seq_tokens = 1;
  int64_t cache_rows = 1;  ///< contiguous: seq_max; paged: the block size
  bool paged = false;
  int64_t max_blocks = 1;  ///< paged: the block table's columns
  int64_t num_blocks = 1;  ///< paged: blocks in the cache
};

/// One rope_append problem's inputs (the values the device sees) and sizes.
struct RopeAppendInputs {
  std::span<const double> q;             ///< [tokens, heads_q, head_dim]
  std::span<const double> k;             ///< [tokens, heads_kv, head_dim]
  std::span<const double> v;             ///< [tokens, heads_kv, head_dim]
  std::span<const double> q_weight;      ///< [head_dim], or empty: no RMSNorm
  std::span<const double> k_weight;      ///< [head_dim], or empty with q_weight
  std::span<const double> cos_sin;       ///< [max_pos, rot_dim]: cos at [p][j], sin at [p][rot_dim/2 + j]
  std::span<const int32_t> positions;    ///< [tokens]
  std::span<const int32_t> block_table;  ///< paged: [sequences, max_blocks]
  int64_t tokens = 0, heads_q = 0, heads_kv = 0, head_dim = 0, rot_dim = 0;
  RopeStyle style = RopeStyle::kNeox;
  double eps = 1e-6;
};

/// q_out [tokens, heads_q, head_dim]; k_cache and v_cache (the caller's, of any size the geometry
/// addresses) updated in place.
std::vector<double> rope_append_f64(const RopeAppendInputs& in, const KvCacheGeometry& cache,
                                    std::vector<double>& k_cache, std::vector<double>& v_cache);

}  // namespace ktune::kernel_templates
