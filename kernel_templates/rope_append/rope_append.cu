// rope_append: the rotary embedding of q and k fused with the KV-cache append of k and v, one
// launch a layer (Llama, Qwen2, Mistral); with NORM a per-head RMSNorm of q and k first (one
// weight vector of head_dim for all q heads, one for all k heads: Qwen3's q_norm / k_norm). f32
// inside, one rounding to T at the end.
//   q [tokens, heads_q, D]  -> q_out, same shape (may alias q: a thread reads an element before it
//                              writes it)
//   k [tokens, heads_kv, D] -> rotated, into k_cache at the token's position
//   v [tokens, heads_kv, D] -> copied into v_cache at the token's position
//
// Rotary (as rmsnorm_rope.cu): p = positions[token] as unsigned; the table row is p modulo max_pos
// (no position reads outside the table). cos_sin [max_pos, ROT_DIM] f32 holds cos(p * theta_j) at
// [p][j] and sin at [p][ROT_DIM/2 + j], j < ROT_DIM/2, so llama3 or YaRN scaling is the table's.
// Only the first ROT_DIM elements of a head rotate (partial rotary); the rest pass through. NeoX
// pairs j with j + ROT_DIM/2, GPT-J 2j with 2j + 1, both at angle j: a' = a cos - b sin,
// b' = b cos + a sin.
//
// The cache: token t belongs to sequence s = t / seq_tokens. A cache is blocks of [heads_kv,
// cache_rows, D]; the token's row is p modulo cache_rows in block
//   contiguous (PAGED false): block s, so the cache is [sequences, heads_kv, seq_max, D] with
//     cache_rows = seq_max (decode_attention's layout; a position past seq_max wraps, a ring);
//   paged: block_table[s * max_blocks + (p / cache_rows) modulo max_blocks] (int32
//     [sequences, max_blocks]), cache_rows = the block size, the cache [num_blocks, heads_kv,
//     block_size, D]; a block id outside [0, num_blocks) writes nothing.
//
// A block holds HEADS lane groups of LANES lanes (a power of two <= 32: a head's reduction is warp
// shuffles only); each group takes ITEMS items (token * (heads_q + 2 heads_kv) + h: the token's q
// heads, then its k heads, then its v heads), every load issued before the first store. Lane l owns
// the vectors at offsets (c * LANES + l) * VEC of the two rotary halves and of the pass-through
// tail: both elements of every pair, for either pairing, stay in one thread.
#include "ops_reduce.cuh"
#include "rope_math.cuh"

/// Where item `item` reads and writes. 32-bit item math (the spec keeps tokens * (heads_q + 2
/// heads_kv) <= INT_MAX); cache offsets in 64 bits.
template <int HEAD_DIM, bool PAGED, typename T>
struct AppendItem {
  bool active = false;  ///< an item of the launch (the last block's tail is not)
  bool writes = false;  ///< active, and its destination exists (a paged block id in range)
  int kind = 0;         ///< 0: q, 1: k, 2: v
  unsigned pos = 0;     ///< the token's position, as unsigned
  const T* src = nullptr;
  T* dst = nullptr;

  __device__ __forceinline__ AppendItem(unsigned item, const T* q, const T* k, const T* v,
                                        const int* positions, const int* block_table, T* q_out, T* k_cache,
                                        T* v_cache, int tokens, int heads_q, int heads_kv, int seq_tokens,
                                        int cache_rows, int max_blocks, int num_blocks) {
    const unsigned heads = static_cast<unsigned>(heads_q + 2 * heads_kv);
    active = item < static_cast<unsigned>(tokens) * heads;
    const unsigned token = active ? item / heads : 0u;
    const int h = static_cast<int>(active ? item - token * heads : 0u);
    kind = h < heads_q ? 0 : (h < heads_q + heads_kv ? 1 : 2);
    pos = active ? static_cast<unsigned>(positions[token]) : 0u;
    writes = active;
    if (kind == 0) {
      const size_t row = static_cast<size_t>(token) * heads_q + h;
      src = q + row * HEAD_DIM;
      dst = q_out + row * HEAD_DIM;
      return;
    }
    const int kv = kind == 1 ? h - heads_q : h - heads_q - heads_kv;
    src = (kind == 1 ? k : v) + (static_cast<size_t>(token) * heads_kv + kv) * HEAD_DIM;
    const unsigned seq = token / static_cast<unsigned>(seq_tokens);
    const unsigned rows = static_cast<unsigned>(cache_rows);
    size_t block = seq;
    if (PAGED) {
      const unsigned logical = (pos / rows) % static_cast<unsigned>(max_blocks);
      const unsigned id =
          active ? static_cast<unsigned>(block_table[static_cast<size_t>(seq) * max_blocks + logical]) : 0u;
      writes = active && id < static_cast<unsigned>(num_blocks);
      block = writes ? id : 0u;
    }
    const size_t row = (block * heads_kv + kv) * rows + pos % rows;
    dst = (kind == 1 ? k_cache : v_cache) + row * HEAD_DIM;
  }
};

template <int HEAD_DIM, int ROT_DIM, int LANES, int VEC, int HEADS, int ITEMS, bool GPTJ, bool NORM, bool PAGED,
          typename T>
__global__ void __launch_bounds__(LANES* HEADS)
    ktune_rope_append(const T* q, const T* __restrict__ k, const T* __restrict__ v, const T* __restrict__ q_weight,
                      const T* __restrict__ k_weight, const float* __restrict__ cos_sin,
                      const int* __restrict__ positions, const int* __restrict__ block_table, T* q_out,
                      T* __restrict__ k_cache, T* __restrict__ v_cache, int tokens, int heads_q, int heads_kv,
                      int seq_tokens, int cache_rows, int max_blocks, int num_blocks, int max_pos, float eps) {
  using namespace ktune_ops;
  constexpr int kRotHalf = ROT_DIM / 2;
  constexpr int kStride = LANES * VEC;
  constexpr int kRot = kRotHalf / kStride;             // chunks of each rotary half
  constexpr int kPass = (HEAD_DIM - ROT_DIM) / kStride;  // chunks of the pass-through tail
  static_assert(kRot * kStride == kRotHalf && kRot >= 1, "ROT_DIM/2 must be a multiple of LANES * VEC");
  static_assert(kPass * kStride == HEAD_DIM - ROT_DIM, "HEAD_DIM - ROT_DIM must be a multiple of LANES * VEC");
  static_assert(VEC % 2 == 0, "VEC must be even (GPT-J pairs lie within a vector)");
  static_assert((LANES * HEADS) % 32 == 0 && LANES <= 32, "whole warps; a head within a warp");
  static_assert(ITEMS >= 1, "ITEMS >= 1");
  constexpr int kBytes = VEC * static_cast<int>(sizeof(T));
  constexpr int kPassSlots = kPass > 0 ? kPass : 1;

  const int group = static_cast<int>(threadIdx.x) / LANES;
  const int lane = static_cast<int>(threadIdx.x) % LANES;
  const unsigned first = blockIdx.x * static_cast<unsigned>(HEADS * ITEMS) + static_cast<unsigned>(group);
  bool vec = aligned_to(q, kBytes) && aligned_to(k, kBytes) && aligned_to(v, kBytes) && aligned_to(q_out, kBytes) &&
             aligned_to(k_cache, kBytes) && aligned_to(v_cache, kBytes);
  if (NORM) vec = vec && aligned_to(q_weight, kBytes) && aligned_to(k_weight, kBytes);
  const bool cs_vec = aligned_to(cos_sin, 16);

  Packed<T, VEC> a[ITEMS][kRot];
  Packed<T, VEC> b[ITEMS][kRot];
  Packed<T, VEC> r[ITEMS][kPassSlots];
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const AppendItem<HEAD_DIM, PAGED, T> it(first + static_cast<unsigned>(j * HEADS), q, k, v, positions,
                                            block_table, q_out, k_cache, v_cache, tokens, heads_q, heads_kv,
                                            seq_tokens, cache_rows, max_blocks, num_blocks);
    const int limit = it.active ? VEC : 0;
    const bool vj = vec && it.active;
#pragma unroll
    for (int c = 0; c < kRot; ++c) {
      const int off = (c * LANES + lane) * VEC;
      a[j][c].template load<true>(it.src + off, limit, vj);
      b[j][c].template load<true>(it.src + kRotHalf + off, limit, vj);
    }
#pragma unroll
    for (int c = 0; c < kPass; ++c) r[j][c].template load<true>(it.src + ROT_DIM + (c * LANES + lane) * VEC, limit, vj);
  }

#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const AppendItem<HEAD_DIM, PAGED, T> it(first + static_cast<unsigned>(j * HEADS), q, k, v, positions,
                                            block_table, q_out, k_cache, v_cache, tokens, heads_q, heads_kv,
                                            seq_tokens, cache_rows, max_blocks, num_blocks);
    const int load_limit = it.active ? VEC : 0;
    const int limit = it.writes ? VEC : 0;
    const bool vj = vec && it.writes;
    if (it.kind == 2) {  // v: a copy, exact
#pragma unroll
      for (int c = 0; c < kRot; ++c) {
        const int off = (c * LANES + lane) * VEC;
        a[j][c].store(it.dst + off, limit, vj);
        b[j][c].store(it.dst + kRotHalf + off, limit, vj);
      }
#pragma unroll
      for (int c = 0; c < kPass; ++c) r[j][c].store(it.dst + ROT_DIM + (c * LANES + lane) * VEC, limit, vj);
      if (!NORM) continue;  // with NORM, every lane of the warp must reach the reduction below
    }
    float inv = 1.0f;
    if (NORM) {
      float ss = 0.0f;
#pragma unroll
      for (int c = 0; c < kRot; ++c) {
        float fa[VEC];
        float fb[VEC];
        a[j][c].unpack(fa);
        b[j][c].unpack(fb);
#pragma unroll
        for (int i = 0; i < VEC; ++i) ss = fmaf(fa[i], fa[i], fmaf(fb[i], fb[i], ss));
      }
#pragma unroll
      for (int c = 0; c < kPass; ++c) {
        float fr[VEC];
        r[j][c].unpack(fr);
#pragma unroll
        for (int i = 0; i < VEC; ++i) ss = fmaf(fr[i], fr[i], ss);
      }
      ss = group_sum<LANES>(ss);
      inv = rsqrtf(ss / static_cast<float>(HEAD_DIM) + eps);
      if (it.kind == 2) continue;
    }
    const T* wt = it.kind == 0 ? q_weight : k_weight;
    const bool wv = vec && it.active;
    const float* cs = cos_sin + static_cast<size_t>(it.pos % static_cast<unsigned>(max_pos)) * ROT_DIM;
#pragma unroll
    for (int c = 0; c < kRot; ++c) {
      const int off = (c * LANES + lane) * VEC;
      float x[VEC];
      float y[VEC];
      a[j][c].unpack(x);
      b[j][c].unpack(y);
      if (NORM) {
        float wa[VEC];
        float wb[VEC];
        load_some<T, VEC>(wt + off, load_limit, wv, 0.0f, wa);
        load_some<T, VEC>(wt + kRotHalf + off, load_limit, wv, 0.0f, wb);
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
          x[i] *= inv * wa[i];
          y[i] *= inv * wb[i];
        }
      }
      rope_rotate<ROT_DIM, VEC, GPTJ>(cs, off, cs_vec && it.active, it.active, x, y);
      store_some<T, VEC>(it.dst + off, limit, vj, x);
      store_some<T, VEC>(it.dst + kRotHalf + off, limit, vj, y);
    }
#pragma unroll
    for (int c = 0; c < kPass; ++c) {
      const int off = ROT_DIM + (c * LANES + lane) * VEC;
      if (NORM) {
        float x[VEC];
        float w[VEC];
        r[j][c].unpack(x);
        load_some<T, VEC>(wt + off, load_limit, wv, 0.0f, w);
#pragma unroll
        for (int i = 0; i < VEC; ++i) x[i] *= inv * w[i];
        store_some<T, VEC>(it.dst + off, limit, vj, x);
      } else {
        r[j][c].store(it.dst + off, limit, vj);
      }
    }
  }
}
