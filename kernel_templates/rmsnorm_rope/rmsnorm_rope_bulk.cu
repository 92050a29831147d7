// rmsnorm_rope, bulk-copy pipeline (sm_90): the operator of rmsnorm_rope.cu (per-head RMSNorm of q
// and k with the q / k weights, then the rotary embedding at positions[token], NeoX or GPT-J, f32
// throughout, one rounding to T) with a token's rows brought into shared memory by bulk copies.
//
// A block of THREADS threads handles STEPS consecutive tokens, one at a time, from a ring of STAGES
// shared-memory stages. A stage holds a token's q row [heads_q, D], k row [heads_kv, D] and its
// cos/sin row [D] f32; thread 0 fills it with three bulk copies (cp.async.bulk, completing on the
// stage's mbarrier), STAGES tokens ahead, reading the token's position first. Both weight vectors
// are copied once a block. A head is LANES = D / 2 / VEC lanes (VEC: 16 bytes of T), lane l owning
// the vectors at l * VEC of both halves, so every rotary pair of either pairing is in one thread;
// the block's THREADS / LANES lane groups walk the token's heads (q heads first), reduce with warp
// shuffles, and store q_out / k_out in 16-byte vectors. q_out and k_out may alias q and k: a
// token's rows have landed in shared memory before any of its outputs is stored, and the copies in
// flight read other tokens' rows.
//
// The spec guarantees: every tensor 16-byte aligned, head_dim 64, 128 or 256, the stages within
// the SM's shared memory.
#include "bulk_copy.cuh"
#include "ops_reduce.cuh"
#include "rope_math.cuh"

template <int HEAD_DIM, int THREADS, int STAGES, int STEPS, bool GPTJ, typename T>
__global__ void __launch_bounds__(THREADS)
    ktune_rmsnorm_rope_bulk(const T* q, const T* k, const T* __restrict__ q_weight,
                            const T* __restrict__ k_weight, const float* __restrict__ cos_sin,
                            const int* __restrict__ positions, T* q_out, T* k_out, int tokens, int heads_q,
                            int heads_kv, int max_pos, float eps) {
  using namespace ktune_ops;
  using namespace ktune_async;
  constexpr int kVec = 16 / static_cast<int>(sizeof(T));
  constexpr int kHalf = HEAD_DIM / 2;
  constexpr int kLanes = kHalf / kVec;
  constexpr int kGroups = THREADS / kLanes;
  static_assert(kLanes * kVec == kHalf && kLanes <= 32 && 32 % kLanes == 0, "a head within a warp");
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS a multiple of 32, at most 1024");
  static_assert(STAGES >= 2 && STEPS >= 1, "STAGES >= 2, STEPS >= 1");
  using Vec = Packed<T, kVec>;
  __shared__ __align__(8) unsigned long long bars[STAGES + 1];  // a stage landed; the weights landed
  KTUNE_OPS_DYNAMIC_SMEM(smem);  // q_weight | k_weight | stage 0 (q row, k row, cos/sin row) | ...

  const int t = static_cast<int>(threadIdx.x);
  const int group = t / kLanes;
  const int lane = t % kLanes;
  const int heads = heads_q + heads_kv;
  const unsigned head_bytes = HEAD_DIM * static_cast<unsigned>(sizeof(T));
  const unsigned q_bytes = static_cast<unsigned>(heads_q) * head_bytes;
  const unsigned k_bytes = static_cast<unsigned>(heads_kv) * head_bytes;
  const unsigned table_bytes = HEAD_DIM * 4u;
  const unsigned stage_bytes = q_bytes + k_bytes + table_bytes;
  unsigned char* const base = reinterpret_cast<unsigned char*>(smem);
  unsigned char* const weights = base;  // q_weight then k_weight, head_bytes each
  auto stage = [&](int s) { return base + 2u * head_bytes + static_cast<unsigned>(s) * stage_bytes; };
  const int first = static_cast<int>(blockIdx.x) * STEPS;
  const int count = min(STEPS, tokens - first);
  const unsigned bar0 = shared_address(bars);
  const unsigned w_bar = bar0 + 8u * STAGES;
  // Thread 0: token first + j into stage j % STAGES.
  auto issue = [&](int j) {
    const int s = j % STAGES;
    const int token = first + j;
    const unsigned pos = static_cast<unsigned>(positions[token]) % static_cast<unsigned>(max_pos);
    const unsigned bar = bar0 + 8u * s;
    unsigned char* st = stage(s);
    mbar_arrive_expect_tx(bar, stage_bytes);
    bulk_load(shared_address(st), q + static_cast<size_t>(token) * heads_q * HEAD_DIM, q_bytes, bar);
    bulk_load(shared_address(st + q_bytes), k + static_cast<size_t>(token) * heads_kv * HEAD_DIM, k_bytes,
              bar);
    bulk_load(shared_address(st + q_bytes + k_bytes), cos_sin + static_cast<size_t>(pos) * HEAD_DIM,
              table_bytes, bar);
  };

  if (t == 0) {
    for (int s = 0; s <= STAGES; ++s) mbar_init(bar0 + 8u * s, 1);
    mbar_init_fence();
  }
  __syncthreads();
  if (t == 0) {
    mbar_arrive_expect_tx(w_bar, 2u * head_bytes);
    bulk_load(shared_address(weights), q_weight, head_bytes, w_bar);
    bulk_load(shared_address(weights + head_bytes), k_weight, head_bytes, w_bar);
    for (int j = 0; j < STAGES && j < count; ++j) issue(j);
  }
  mbar_wait(w_bar, 0);

  const int off = lane * kVec;
  for (int j = 0; j < count; ++j) {
    const int s = j % STAGES;
    mbar_wait(bar0 + 8u * s, static_cast<unsigned>(j / STAGES) & 1u);
    const unsigned char* st = stage(s);
    const float* cs = reinterpret_cast<const float*>(st + q_bytes + k_bytes);
    const int token = first + j;
    // Every lane group of a warp runs the same number of rounds (the reduction's shuffles take the
    // whole warp); a group past the last head computes on zeros and stores nothing.
    for (int h0 = 0; h0 < heads; h0 += kGroups) {
      const int h = h0 + group;
      const bool active = h < heads;
      const bool is_q = h < heads_q;
      const T* src = reinterpret_cast<const T*>(st) + static_cast<size_t>(active ? h : 0) * HEAD_DIM;
      const T* w = reinterpret_cast<const T*>(weights + (is_q ? 0u : head_bytes));
      Vec a;
      Vec b;
      a.raw = *reinterpret_cast<const int4*>(src + off);
      b.raw = *reinterpret_cast<const int4*>(src + kHalf + off);
      float x[kVec];
      float y[kVec];
      a.unpack(x);
      b.unpack(y);
      float ss = 0.0f;
#pragma unroll
      for (int i = 0; i < kVec; ++i) ss = fmaf(x[i], x[i], fmaf(y[i], y[i], ss));
      ss = group_sum<kLanes>(ss);
      const float inv = rsqrtf(ss / static_cast<float>(HEAD_DIM) + eps);
      Vec wa;
      Vec wb;
      wa.raw = *reinterpret_cast<const int4*>(w + off);
      wb.raw = *reinterpret_cast<const int4*>(w + kHalf + off);
      float fa[kVec];
      float fb[kVec];
      wa.unpack(fa);
      wb.unpack(fb);
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        x[i] *= inv * fa[i];
        y[i] *= inv * fb[i];
      }
      rope_rotate<HEAD_DIM, kVec, GPTJ>(cs, off, true, true, x, y);
      if (active) {
        T* dst = is_q ? q_out + (static_cast<size_t>(token) * heads_q + h) * HEAD_DIM
                      : k_out + (static_cast<size_t>(token) * heads_kv + (h - heads_q)) * HEAD_DIM;
        a.pack(x);
        b.pack(y);
        *reinterpret_cast<int4*>(dst + off) = a.raw;
        *reinterpret_cast<int4*>(dst + kHalf + off) = b.raw;
      }
    }
    __syncthreads();  // the stage is read
    if (t == 0 && j + STAGES < count) issue(j + STAGES);
  }
}
