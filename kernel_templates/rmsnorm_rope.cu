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
// A block holds HEADS heads (items token * (heads_q + heads_kv) + h, q heads first) of LANES lanes
// each (a power of two <= 32, so a head's reduction is warp shuffles only, no shared memory). Lane
// l owns the vectors at offsets (c * LANES + l) * VEC of both halves of the head, c < D / 2 /
// (LANES * VEC): both elements of every pair, for either pairing, stay in one thread.
#include "ops_reduce.cuh"

/// Loads N consecutive floats of the cos/sin table (16-byte vectors when `vector`: the table is
/// 16-byte aligned and, as every run here starts at a multiple of N, so is the run when N % 4 == 0;
/// pairs when N == 2). Reads nothing when `active` is false (the values are then unused).
template <int N>
__device__ __forceinline__ void load_f32_run(const float* p, bool vector, bool active, float* out) {
  if (vector && N % 4 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 4) {
      const float4 v = *reinterpret_cast<const float4*>(p + i);
      out[i] = v.x;
      out[i + 1] = v.y;
      out[i + 2] = v.z;
      out[i + 3] = v.w;
    }
  } else if (vector && N % 2 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 2) {
      const float2 v = *reinterpret_cast<const float2*>(p + i);
      out[i] = v.x;
      out[i + 1] = v.y;
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) out[i] = active ? p[i] : 0.0f;
  }
}

template <int HEAD_DIM, int LANES, int VEC, int HEADS, bool GPTJ, typename T>
__global__ void __launch_bounds__(LANES* HEADS)
    ktune_rmsnorm_rope(const T* q, const T* k, const T* __restrict__ q_weight, const T* __restrict__ k_weight,
                       const float* __restrict__ cos_sin, const int* __restrict__ positions, T* q_out,
                       T* k_out, int tokens, int heads_q, int heads_kv, int max_pos, float eps) {
  using namespace ktune_ops;
  constexpr int kHalf = HEAD_DIM / 2;
  constexpr int kChunks = kHalf / (LANES * VEC);
  static_assert(kChunks * LANES * VEC == kHalf, "D/2 must be a multiple of LANES * VEC");
  static_assert(VEC % 2 == 0, "VEC must be even (GPT-J pairs lie within a vector)");
  static_assert((LANES * HEADS) % 32 == 0 && LANES <= 32, "whole warps; a head within a warp");
  constexpr int kBytes = VEC * static_cast<int>(sizeof(T));

  const int heads = heads_q + heads_kv;
  const long long item = static_cast<long long>(blockIdx.x) * HEADS + threadIdx.x / LANES;
  const int lane = static_cast<int>(threadIdx.x) % LANES;
  const bool active = item < static_cast<long long>(tokens) * heads;
  const int token = active ? static_cast<int>(item / heads) : 0;
  const int h = active ? static_cast<int>(item % heads) : 0;
  const bool is_q = h < heads_q;
  const size_t row = is_q ? (static_cast<size_t>(token) * heads_q + h)
                          : (static_cast<size_t>(token) * heads_kv + (h - heads_q));
  const T* src = (is_q ? q : k) + row * HEAD_DIM;
  T* dst = (is_q ? q_out : k_out) + row * HEAD_DIM;
  const T* wt = is_q ? q_weight : k_weight;
  const bool vec = aligned_to(q, kBytes) && aligned_to(k, kBytes) && aligned_to(q_out, kBytes) &&
                   aligned_to(k_out, kBytes) && aligned_to(q_weight, kBytes) && aligned_to(k_weight, kBytes);
  const int limit = active ? VEC : 0;

  // Registers decide the speed here (occupancy x bytes in flight): while the loads of q / k are in
  // flight a thread holds them packed as T, and only the position; the weights and the cos/sin row
  // (L1 / L2 hits: every head of a token shares them) are loaded after the reduction.
  const unsigned p = active ? static_cast<unsigned>(positions[token]) % static_cast<unsigned>(max_pos) : 0u;
  Packed<T, VEC> a[kChunks];
  Packed<T, VEC> b[kChunks];
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int off = (c * LANES + lane) * VEC;
    // q and k are read once: evict-first (the weights and the table stay).
    a[c].template load<true>(src + off, limit, vec && active);
    b[c].template load<true>(src + kHalf + off, limit, vec && active);
  }
  float ss = 0.0f;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    float fa[VEC];
    float fb[VEC];
    a[c].unpack(fa);
    b[c].unpack(fb);
#pragma unroll
    for (int i = 0; i < VEC; ++i) ss = fmaf(fa[i], fa[i], fmaf(fb[i], fb[i], ss));
  }
  ss = group_sum<LANES>(ss);
  const float inv = rsqrtf(ss / static_cast<float>(HEAD_DIM) + eps);
  const float* cs = cos_sin + static_cast<size_t>(p) * HEAD_DIM;
  const bool cs_vec = aligned_to(cos_sin, 16);

#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int off = (c * LANES + lane) * VEC;
    float x[VEC];
    float y[VEC];
    float wa[VEC];
    float wb[VEC];
    a[c].unpack(x);
    b[c].unpack(y);
    load_some<T, VEC>(wt + off, limit, vec && active, 0.0f, wa);
    load_some<T, VEC>(wt + kHalf + off, limit, vec && active, 0.0f, wb);
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
      x[i] *= inv * wa[i];
      y[i] *= inv * wb[i];
    }
    // The angles of this chunk: NeoX pairs j with j + D/2 at angle j (VEC angles from `off`); GPT-J
    // pairs 2j, 2j + 1 (VEC / 2 angles from off / 2 for the first half, (D/2 + off) / 2 the second).
    float cosv[VEC];
    float sinv[VEC];
    if (GPTJ) {
      load_f32_run<VEC / 2>(cs + off / 2, cs_vec && active, active, cosv);
      load_f32_run<VEC / 2>(cs + (kHalf + off) / 2, cs_vec && active, active, cosv + VEC / 2);
      load_f32_run<VEC / 2>(cs + kHalf + off / 2, cs_vec && active, active, sinv);
      load_f32_run<VEC / 2>(cs + kHalf + (kHalf + off) / 2, cs_vec && active, active, sinv + VEC / 2);
#pragma unroll
      for (int i = 0; i < VEC; i += 2) {
        const float ca = cosv[i / 2], sa = sinv[i / 2];
        const float cb = cosv[VEC / 2 + i / 2], sb = sinv[VEC / 2 + i / 2];
        const float a0 = x[i], a1 = x[i + 1];
        const float b0 = y[i], b1 = y[i + 1];
        x[i] = a0 * ca - a1 * sa;
        x[i + 1] = a1 * ca + a0 * sa;
        y[i] = b0 * cb - b1 * sb;
        y[i + 1] = b1 * cb + b0 * sb;
      }
    } else {
      load_f32_run<VEC>(cs + off, cs_vec && active, active, cosv);
      load_f32_run<VEC>(cs + kHalf + off, cs_vec && active, active, sinv);
#pragma unroll
      for (int i = 0; i < VEC; ++i) {
        const float x0 = x[i];
        const float x1 = y[i];
        x[i] = x0 * cosv[i] - x1 * sinv[i];
        y[i] = x1 * cosv[i] + x0 * sinv[i];
      }
    }
    store_some<T, VEC>(dst + off, limit, vec && active, x);
    store_some<T, VEC>(dst + kHalf + off, limit, vec && active, y);
  }
}
