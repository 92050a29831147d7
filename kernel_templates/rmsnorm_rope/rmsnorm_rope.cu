// rmsnorm_rope: per-head RMSNorm of Q and K (one weight vector of head_dim for all q heads, one for
// all k heads, as Qwen3's q_norm / k_norm) fused with the rotary embedding, f32 throughout, one
// rounding to T at the end. q [tokens, heads_q, D], k [tokens, heads_kv, D] -> q_out, k_out of the
// same shapes (may alias q, k: every element is read before the same thread writes it).
//
// Rotary: p = positions[token] (int32) taken modulo max_pos as unsigned, so no position can read
// outside the table; cos_sin [max_pos, D] f32 holds cos(p * theta_j) at [p][j] and sin at
// [p][D/2 + j], j < D/2. NeoX (rotate-half) pairs element j with j + D/2 (angle j); GPT-J
// (interleaved) pairs 2j with 2j + 1 (angle j). For each pair (a, b) at angle j:
// a' = a cos - b sin, b' = b cos + a sin, applied to the normalised values n = x * inv * w.
//
// A block holds HEADS lane groups of LANES lanes (a power of two <= 32, so a head's reduction is
// warp shuffles only, no shared memory); each group normalises ITEMS heads (items token *
// (heads_q + heads_kv) + h, q heads first), all their loads issued before the first reduction. Lane
// l owns the vectors at offsets (c * LANES + l) * VEC of both halves of the head, c < D / 2 /
// (LANES * VEC): both elements of every pair, for either pairing, stay in one thread.
#include "ops_reduce.cuh"
#include "rope_math.cuh"

/// Asks L1 for the line holding p (prefetch.global.L1); nothing in the CPU emulation.
__device__ __forceinline__ void prefetch_l1(const void* p) {
#ifdef __CUDA_ARCH__
  asm volatile("prefetch.global.L1 [%0];" ::"l"(p));
#endif
}

/// Where item `item` (token * (heads_q + heads_kv) + h, q heads first) lives. 32-bit index math:
/// the spec keeps tokens * (heads_q + heads_kv) <= INT_MAX, so every item a grid names (less than
/// that plus one block's items) fits an unsigned int, and a 32-bit division is a fraction of the
/// cost of a 64-bit one (H200, 16384 tokens: 81.7 % -> 83.4 % of the copy ceiling).
template <int HEAD_DIM, typename T>
struct RopeItem {
  bool active = false;
  bool is_q = true;
  int token = 0;
  const T* src = nullptr;
  T* dst = nullptr;

  __device__ __forceinline__ RopeItem(unsigned item, const T* q, const T* k, T* q_out, T* k_out, int tokens,
                                      int heads_q, int heads_kv) {
    const unsigned heads = static_cast<unsigned>(heads_q + heads_kv);
    active = item < static_cast<unsigned>(tokens) * heads;
    const unsigned tok = active ? item / heads : 0u;
    token = static_cast<int>(tok);
    const int h = static_cast<int>(active ? item - tok * heads : 0u);
    is_q = h < heads_q;
    const size_t row = is_q ? (static_cast<size_t>(token) * heads_q + h)
                            : (static_cast<size_t>(token) * heads_kv + (h - heads_q));
    src = (is_q ? q : k) + row * HEAD_DIM;
    dst = (is_q ? q_out : k_out) + row * HEAD_DIM;
  }
};

/// OCC > 0: __launch_bounds__ asks ptxas to fit OCC threads an SM (OCC / threads blocks), which caps
/// the registers a thread at about 65536 / OCC: more blocks an SM, so more bytes in flight, at the
/// cost of the compiler's scheduling freedom (or spills). OCC 0 asks nothing (minimum blocks 0).
template <int HEAD_DIM, int LANES, int VEC, int HEADS, int ITEMS, int OCC, bool GPTJ, typename T>
__global__ void __launch_bounds__(LANES* HEADS, OCC / (LANES * HEADS))
    ktune_rmsnorm_rope(const T* q, const T* k, const T* __restrict__ q_weight, const T* __restrict__ k_weight,
                       const float* __restrict__ cos_sin, const int* __restrict__ positions, T* q_out,
                       T* k_out, int tokens, int heads_q, int heads_kv, int max_pos, float eps) {
  using namespace ktune_ops;
  constexpr int kHalf = HEAD_DIM / 2;
  constexpr int kChunks = kHalf / (LANES * VEC);
  static_assert(kChunks * LANES * VEC == kHalf, "D/2 must be a multiple of LANES * VEC");
  static_assert(VEC % 2 == 0, "VEC must be even (GPT-J pairs lie within a vector)");
  static_assert((LANES * HEADS) % 32 == 0 && LANES <= 32, "whole warps; a head within a warp");
  static_assert(ITEMS >= 1, "ITEMS >= 1");
  static_assert(OCC % (LANES * HEADS) == 0 && OCC / (LANES * HEADS) <= 32 && OCC <= 2048,
                "OCC: 0, or whole blocks of this size, at most 32 of them and 2048 threads");
  constexpr int kBytes = VEC * static_cast<int>(sizeof(T));

  const int group = static_cast<int>(threadIdx.x) / LANES;
  const int lane = static_cast<int>(threadIdx.x) % LANES;
  // Item j of this lane group: the block's j-th run of HEADS consecutive items, so for each j the
  // groups of a block read HEADS consecutive heads (contiguous memory).
  const unsigned first = blockIdx.x * static_cast<unsigned>(HEADS * ITEMS) + static_cast<unsigned>(group);
  const bool vec = aligned_to(q, kBytes) && aligned_to(k, kBytes) && aligned_to(q_out, kBytes) &&
                   aligned_to(k_out, kBytes) && aligned_to(q_weight, kBytes) && aligned_to(k_weight, kBytes);
  const bool cs_vec = aligned_to(cos_sin, 16);

  // Registers decide the speed here (occupancy x bytes in flight): while the loads of q / k are in
  // flight a thread holds them packed as T (ITEMS heads' worth), and only the positions; the
  // weights and the cos/sin row (L1 / L2 hits: every head of a token shares them) are loaded after
  // the reduction.
  Packed<T, VEC> a[ITEMS][kChunks];
  Packed<T, VEC> b[ITEMS][kChunks];
  unsigned pos[ITEMS];
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const RopeItem<HEAD_DIM, T> it(first + static_cast<unsigned>(j * HEADS), q, k, q_out, k_out, tokens,
                                   heads_q, heads_kv);
    pos[j] = it.active ? static_cast<unsigned>(positions[it.token]) % static_cast<unsigned>(max_pos) : 0u;
    const int limit = it.active ? VEC : 0;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int off = (c * LANES + lane) * VEC;
      // q and k are read once: evict-first (the weights and the table stay).
      a[j][c].template load<true>(it.src + off, limit, vec && it.active);
      b[j][c].template load<true>(it.src + kHalf + off, limit, vec && it.active);
    }
  }
  // The table row each item needs after its reduction, asked of L1 now, a 128-byte line a lane:
  // the loads after the reduction then hit L1 instead of waiting on L2 (the row is shared by the
  // token's heads, which run in other warps, often on other SMs). Waits on the positions only.
  constexpr int kLines = HEAD_DIM * 4 / 128;
#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const float* cs = cos_sin + static_cast<size_t>(pos[j]) * HEAD_DIM;
#pragma unroll
    for (int line = lane; line < kLines; line += LANES) prefetch_l1(cs + line * 32);
  }

#pragma unroll
  for (int j = 0; j < ITEMS; ++j) {
    const RopeItem<HEAD_DIM, T> it(first + static_cast<unsigned>(j * HEADS), q, k, q_out, k_out, tokens,
                                   heads_q, heads_kv);
    const int limit = it.active ? VEC : 0;
    const T* wt = it.is_q ? q_weight : k_weight;
    float ss = 0.0f;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      float fa[VEC];
      float fb[VEC];
      a[j][c].unpack(fa);
      b[j][c].unpack(fb);
#pragma unroll
      for (int i = 0; i < VEC; ++i) ss = fmaf(fa[i], fa[i], fmaf(fb[i], fb[i], ss));
    }
    ss = group_sum<LANES>(ss);
    const float inv = rsqrtf(ss / static_cast<float>(HEAD_DIM) + eps);
    const float* cs = cos_sin + static_cast<size_t>(pos[j]) * HEAD_DIM;

#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int off = (c * LANES + lane) * VEC;
      float x[VEC];
      float y[VEC];
      float wa[VEC];
      float wb[VEC];
      a[j][c].unpack(x);
      b[j][c].unpack(y);
      load_some<T, VEC>(wt + off, limit, vec && it.active, 0.0f, wa);
      load_some<T, VEC>(wt + kHalf + off, limit, vec && it.active, 0.0f, wb);
#pragma unroll
      for (int i = 0; i < VEC; ++i) {
        x[i] *= inv * wa[i];
        y[i] *= inv * wb[i];
      }
      rope_rotate<HEAD_DIM, VEC, GPTJ>(cs, off, cs_vec && it.active, it.active, x, y);
      store_some<T, VEC>(it.dst + off, limit, vec && it.active, x);
      store_some<T, VEC>(it.dst + kHalf + off, limit, vec && it.active, y);
    }
  }
}
