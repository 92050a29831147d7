// decode_attention: one query token per sequence over a KV cache, split-KV (flash-decoding).
//   q [batch, heads_q, D], k and v [batch, heads_kv, seq_max, D], o [batch, heads_q, D], all T;
//   o[b, h] = sum_t softmax_t(scale * q[b, h] . k[b, h / group, t]) v[b, h / group, t] over the
//   context t < len(b): len = seq, or context_lens[b] clamped to [0, seq] when context_lens is
//   given; len 0 gives o = 0. group = heads_q / heads_kv query heads share one K/V head (GQA).
//
// ktune_decode_attention: grid (num_splits, heads_q / G, batch), WARPS warps. A block owns G query
// heads of one group (G = the group, or a divisor of it when the group is larger than 8) and split
// s of the context, keys [s * chunk, (s + 1) * chunk) below len, chunk = ceil(seq / num_splits)
// rounded up to BLOCK_N. Each K and V row is read once for all G heads. A key is held by
// kLanes = D / 8 lanes, a lane loading 16 bytes (8 elements) of it; a warp covers kSlots = 32 /
// kLanes keys a load and a tile of BLOCK_N keys takes kUnroll = BLOCK_N / (WARPS * kSlots) loads
// of K and of V a lane, all issued before the math. Every lane group keeps its own online
// softmax state (max m, sum l, un-normalised accumulator) per head in base 2 (q is pre-scaled by
// scale * log2(e)); at the end the slots of a warp merge by shuffles, the warps through shared
// memory. num_splits == 1: o is written directly; otherwise the block writes its partial (m, l,
// acc) to the f32 workspace and ktune_decode_attention_combine merges the splits with the
// log-sum-exp rule. Workspace: acc [batch * heads_q, num_splits, D] then (m, l) [batch * heads_q,
// num_splits, 2]; every entry is written (an empty split writes m = -inf, l = 0, acc = 0).
//
// K and V rows are read as 16-byte vectors: k and v must be 16-byte aligned (D * sizeof(T) is a
// multiple of 16). q and o are accessed element by element (any alignment). The last four arguments
// (a paged cache's block table and geometry) are the tensor-core templates'; this template reads a
// contiguous cache only (its spec refuses the paged mode) and ignores them.
#include "decode_attention_split.cuh"


template <int D, int G, int BLOCK_N, int WARPS, typename T>
__global__ void __launch_bounds__(WARPS * 32)
    ktune_decode_attention(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                           T* __restrict__ o, float* __restrict__ workspace,
                           const int* __restrict__ context_lens, int heads_q, int heads_kv, int seq,
                           int seq_max, int num_splits, float scale, const int* __restrict__, int, int, int) {
  using namespace ktune_ops;
  constexpr int kElems = 16 / static_cast<int>(sizeof(T));
  constexpr int kLanes = D / kElems;
  constexpr int kSlots = 32 / kLanes;
  constexpr int kUnroll = BLOCK_N / (WARPS * kSlots);
  static_assert(D % kElems == 0 && kLanes <= 32 && 32 % kLanes == 0, "D / 8 lanes must divide a warp");
  static_assert(kUnroll >= 1 && kUnroll * WARPS * kSlots == BLOCK_N, "BLOCK_N = WARPS * kSlots * unroll");
  static_assert(G >= 1 && G <= 8, "1 to 8 heads a block");
  constexpr float kLog2e = 1.4426950408889634f;
  __shared__ float red_acc[WARPS][G][D];
  __shared__ float red_m[WARPS][G];
  __shared__ float red_l[WARPS][G];

  const int split = static_cast<int>(blockIdx.x);
  const int h0 = static_cast<int>(blockIdx.y) * G;  // first query head of the block
  const int b = static_cast<int>(blockIdx.z);
  const int hkv = h0 / (heads_q / heads_kv);
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int slot = lane / kLanes;
  const int part = lane % kLanes;  // this lane's elements of a row: [part * kElems, + kElems)

  int len = seq;
  if (context_lens != nullptr) len = min(max(context_lens[b], 0), seq);
  const int per_split = (seq + num_splits - 1) / num_splits;
  const int chunk = (per_split + BLOCK_N - 1) / BLOCK_N * BLOCK_N;
  const int begin = min(split * chunk, len);  // split * chunk may pass len (empty split)
  const int end = min(begin + chunk, len);

  float qf[G][kElems];
  {
    const T* qh = q + (static_cast<size_t>(b) * heads_q + h0) * D + part * kElems;
    const float k2 = scale * kLog2e;
#pragma unroll
    for (int g = 0; g < G; ++g) {
#pragma unroll
      for (int i = 0; i < kElems; ++i) qf[g][i] = ktune_dev::to_f32<T>(qh[g * D + i]) * k2;
    }
  }
  const size_t head_base = (static_cast<size_t>(b) * heads_kv + hkv) * static_cast<size_t>(seq_max) * D +
                           static_cast<size_t>(part * kElems);
  const T* kh = k + head_base;
  const T* vh = v + head_base;

  float m[G];
  float l[G];
  float acc[G][kElems];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    m[g] = neg_inf();
    l[g] = 0.0f;
#pragma unroll
    for (int i = 0; i < kElems; ++i) acc[g][i] = 0.0f;
  }

  for (int t0 = begin; t0 < end; t0 += BLOCK_N) {
    int4 kr[kUnroll];
    int4 vr[kUnroll];
    bool live[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int key = t0 + (u * WARPS + warp) * kSlots + slot;
      live[u] = key < end;
      if (live[u]) {
        kr[u] = __ldg(reinterpret_cast<const int4*>(kh + static_cast<size_t>(key) * D));
        vr[u] = __ldg(reinterpret_cast<const int4*>(vh + static_cast<size_t>(key) * D));
      } else {
        kr[u] = make_int4(0, 0, 0, 0);
        vr[u] = make_int4(0, 0, 0, 0);
      }
    }
    float s[kUnroll][G];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const T* ke = reinterpret_cast<const T*>(&kr[u]);
      float kf[kElems];
#pragma unroll
      for (int i = 0; i < kElems; ++i) kf[i] = ktune_dev::to_f32<T>(ke[i]);
#pragma unroll
      for (int g = 0; g < G; ++g) {
        float d = 0.0f;
#pragma unroll
        for (int i = 0; i < kElems; ++i) d += qf[g][i] * kf[i];
        d = group_sum<kLanes>(d);  // every lane of the warp takes part, live or not
        s[u][g] = live[u] ? d : neg_inf();
      }
    }
    float base[G];
#pragma unroll
    for (int g = 0; g < G; ++g) {
      float mt = m[g];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) mt = fmaxf(mt, s[u][g]);
      base[g] = mt == neg_inf() ? 0.0f : mt;  // no live key yet: every weight below is 0
      const float alpha = exp2f(m[g] - base[g]);
      l[g] *= alpha;
#pragma unroll
      for (int i = 0; i < kElems; ++i) acc[g][i] *= alpha;
      m[g] = mt;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const T* ve = reinterpret_cast<const T*>(&vr[u]);
      float vf[kElems];
#pragma unroll
      for (int i = 0; i < kElems; ++i) vf[i] = ktune_dev::to_f32<T>(ve[i]);
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const float p = exp2f(s[u][g] - base[g]);
        l[g] += p;
#pragma unroll
        for (int i = 0; i < kElems; ++i) acc[g][i] += p * vf[i];
      }
    }
  }

  // Merge the slots of the warp: lanes at distance kLanes, 2 kLanes, ... hold the same elements.
#pragma unroll
  for (int off = kLanes; off < 32; off *= 2) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const float m2 = __shfl_xor_sync(0xffffffffu, m[g], off);
      const float l2 = __shfl_xor_sync(0xffffffffu, l[g], off);
      float a2[kElems];
#pragma unroll
      for (int i = 0; i < kElems; ++i) a2[i] = __shfl_xor_sync(0xffffffffu, acc[g][i], off);
      ktune_attn::merge_state<kElems>(m[g], l[g], acc[g], m2, l2, a2);
    }
  }
  if (slot == 0) {
#pragma unroll
    for (int g = 0; g < G; ++g) {
#pragma unroll
      for (int i = 0; i < kElems; ++i) red_acc[warp][g][part * kElems + i] = acc[g][i];
      if (part == 0) {
        red_m[warp][g] = m[g];
        red_l[warp][g] = l[g];
      }
    }
  }
  __syncthreads();

  ktune_attn::finish_block<D, G, WARPS>(red_acc, red_m, red_l, o, workspace, b, h0, heads_q, split,
                                        num_splits);
}

