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
// (heads_q + heads_kv) + h, q heads first), all their loads issued before the first reduction, and
// does so STEPS times; with STAGES > 1 the batches land in a shared-memory ring through cp.async,
// STAGES - 1 batches in flight while one is worked on. Lane
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

/// Where item `item` (token * (heads_q + heads_kv) + h, q heads first) lives. 32-bit index math:
/// the spec keeps tokens * (heads_q + heads_kv) <= INT_MAX, so every item a grid names (less than
/// that plus one block's items) fits an unsigned int, and 32-bit division is a fraction of 64-bit's.
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

/// The q / k vectors of ITEMS heads of one lane group, packed as loaded, and their positions.
template <typename T, int VEC, int ITEMS, int CHUNKS>
struct RopeBatch {
  ktune_ops::Packed<T, VEC> a[ITEMS][CHUNKS];  // first halves
  ktune_ops::Packed<T, VEC> b[ITEMS][CHUNKS];  // second halves
  unsigned pos[ITEMS];
};

/// A lane group's view of the problem: where its items live, how it loads them (to registers, or
/// into a shared-memory ring through cp.async) and how it finishes them.
template <int HEAD_DIM, int LANES, int VEC, int HEADS, int ITEMS, bool GPTJ, typename T>
struct RopeGroup {
  static constexpr int kHalf = HEAD_DIM / 2;
  static constexpr int kChunks = kHalf / (LANES * VEC);
  using Batch = RopeBatch<T, VEC, ITEMS, kChunks>;

  // The 2 * VEC table values a chunk needs (VEC cosines, then VEC sines) are runs of kRun floats
  // of the token's row: NeoX 2 runs of VEC (cos at off, sin at D/2 + off), GPT-J 4 runs of VEC / 2
  // (cos at off / 2 and (D/2 + off) / 2, sin D/2 past each).
  static constexpr int kRun = GPTJ ? VEC / 2 : VEC;
  static constexpr int kRuns = 2 * VEC / kRun;
  __device__ __forceinline__ static int run_offset(int r, int off) {
    if (!GPTJ) return r == 0 ? off : kHalf + off;
    return (r >= 2 ? kHalf : 0) + ((r % 2 == 0) ? off / 2 : (kHalf + off) / 2);
  }

  // The ring of the STAGES > 1 path, laid out [slot][vector][thread] so a warp's accesses are
  // consecutive: per stage ITEMS * kChunks * 2 vectors of q / k and ITEMS * kChunks * kPieces
  // pieces of the table (the table copied in pieces of up to 16 bytes).
  using Raw = typename ktune_ops::Packed<T, VEC>::Raw;
  static constexpr int kVectors = ITEMS * kChunks * 2;
  static constexpr int kPieceBytes = kRun * 4 < 16 ? kRun * 4 : 16;
  using Piece = typename ktune_ops::RawVec<kPieceBytes>::type;
  static constexpr int kPieces = 2 * VEC * 4 / kPieceBytes;  // a chunk's table values
  static constexpr int kPiecesPerRun = kPieces / kRuns;

  const T* q;
  const T* k;
  const T* q_weight;
  const T* k_weight;
  const float* cos_sin;
  const int* positions;
  T* q_out;
  T* k_out;
  int tokens, heads_q, heads_kv, max_pos;
  float eps;
  int lane;
  bool vec, cs_vec;

  __device__ __forceinline__ RopeItem<HEAD_DIM, T> item(unsigned i) const {
    return RopeItem<HEAD_DIM, T>(i, q, k, q_out, k_out, tokens, heads_q, heads_kv);
  }
  /// The table row of item `it` (0 for an inactive one).
  __device__ __forceinline__ unsigned position(const RopeItem<HEAD_DIM, T>& it) const {
    return it.active ? static_cast<unsigned>(positions[it.token]) % static_cast<unsigned>(max_pos) : 0u;
  }
  __device__ __forceinline__ int offset(int c) const { return (c * LANES + lane) * VEC; }

  /// Loads the 2 * VEC table values of chunk offset `off` from row `pos` (nothing when inactive).
  __device__ __forceinline__ void load_table(unsigned pos, int off, bool active, float* values) const {
    const float* row = cos_sin + static_cast<size_t>(pos) * HEAD_DIM;
#pragma unroll
    for (int r = 0; r < kRuns; ++r) load_f32_run<kRun>(row + run_offset(r, off), cs_vec && active, active, values + r * kRun);
  }

  /// Issues the loads of items first + j * HEADS, j < ITEMS, to registers (q and k evict-first:
  /// read once).
  __device__ __forceinline__ void load(unsigned first, Batch& batch) const {
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const RopeItem<HEAD_DIM, T> it = item(first + static_cast<unsigned>(j * HEADS));
      batch.pos[j] = position(it);
      const int limit = it.active ? VEC : 0;
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        batch.a[j][c].template load<true>(it.src + offset(c), limit, vec && it.active);
        batch.b[j][c].template load<true>(it.src + kHalf + offset(c), limit, vec && it.active);
      }
    }
  }

  /// Starts copying items first + j * HEADS, j < ITEMS (table rows pos[j]), into ring slot `slot`:
  /// q / k on the vector path and the table when aligned, active items only (land() and the
  /// table source of finish() load the others themselves).
  template <int THREADS>
  __device__ __forceinline__ void stage(unsigned first, const unsigned* pos, int slot, Raw (*ring)[THREADS],
                                        Piece (*table_ring)[THREADS], int tid) const {
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const RopeItem<HEAD_DIM, T> it = item(first + static_cast<unsigned>(j * HEADS));
      if (!it.active) continue;
      const float* row = cos_sin + static_cast<size_t>(pos[j]) * HEAD_DIM;
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        if (vec) {
          Raw (*v)[THREADS] = ring + slot * kVectors + (j * kChunks + c) * 2;
          ktune_ops::copy_async(&v[0][tid], reinterpret_cast<const Raw*>(it.src + offset(c)));
          ktune_ops::copy_async(&v[1][tid], reinterpret_cast<const Raw*>(it.src + kHalf + offset(c)));
        }
        if (cs_vec) {
          Piece (*t)[THREADS] = table_ring + ((slot * ITEMS + j) * kChunks + c) * kPieces;
#pragma unroll
          for (int r = 0; r < kRuns; ++r) {
            const Piece* src = reinterpret_cast<const Piece*>(row + run_offset(r, offset(c)));
#pragma unroll
            for (int i = 0; i < kPiecesPerRun; ++i) ktune_ops::copy_async(&t[r * kPiecesPerRun + i][tid], src + i);
          }
        }
      }
    }
  }

  /// The q / k of the batch stage() started into `slot` (landed: after copy_async_wait), into
  /// registers.
  template <int THREADS>
  __device__ __forceinline__ void land(unsigned first, const unsigned* pos, int slot, const Raw (*ring)[THREADS],
                                       int tid, Batch& batch) const {
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const RopeItem<HEAD_DIM, T> it = item(first + static_cast<unsigned>(j * HEADS));
      batch.pos[j] = pos[j];
      const int limit = it.active ? VEC : 0;
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        if (vec && it.active) {
          batch.a[j][c].raw = ring[slot * kVectors + (j * kChunks + c) * 2][tid];
          batch.b[j][c].raw = ring[slot * kVectors + (j * kChunks + c) * 2 + 1][tid];
        } else {
          batch.a[j][c].load(it.src + offset(c), limit, false);
          batch.b[j][c].load(it.src + kHalf + offset(c), limit, false);
        }
      }
    }
  }

  /// Normalises, rotates and stores the items of `batch` (first + j * HEADS). table(j, c, it,
  /// pos, off, values) gives the 2 * VEC table values of item j's chunk c.
  template <class Table>
  __device__ __forceinline__ void finish(unsigned first, const Batch& batch, Table table) const {
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const RopeItem<HEAD_DIM, T> it = item(first + static_cast<unsigned>(j * HEADS));
      const int limit = it.active ? VEC : 0;
      const T* wt = it.is_q ? q_weight : k_weight;
      float ss = 0.0f;
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        float fa[VEC];
        float fb[VEC];
        batch.a[j][c].unpack(fa);
        batch.b[j][c].unpack(fb);
#pragma unroll
        for (int i = 0; i < VEC; ++i) ss = fmaf(fa[i], fa[i], fmaf(fb[i], fb[i], ss));
      }
      ss = ktune_ops::group_sum<LANES>(ss);
      const float inv = rsqrtf(ss / static_cast<float>(HEAD_DIM) + eps);

#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        const int off = offset(c);
        float x[VEC];
        float y[VEC];
        float wa[VEC];
        float wb[VEC];
        batch.a[j][c].unpack(x);
        batch.b[j][c].unpack(y);
        ktune_ops::load_some<T, VEC>(wt + off, limit, vec && it.active, 0.0f, wa);
        ktune_ops::load_some<T, VEC>(wt + kHalf + off, limit, vec && it.active, 0.0f, wb);
#pragma unroll
        for (int i = 0; i < VEC; ++i) {
          x[i] *= inv * wa[i];
          y[i] *= inv * wb[i];
        }
        float cs[2 * VEC];  // VEC cosines, then VEC sines (see kRun)
        table(j, c, it, batch.pos[j], off, cs);
        const float* cosv = cs;
        const float* sinv = cs + VEC;
        if (GPTJ) {
          // Pairs (2i, 2i + 1): the first half's at angles off / 2 + i, the second's at
          // (D/2 + off) / 2 + i.
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
          // Pairs (j, j + D/2) at angle j.
#pragma unroll
          for (int i = 0; i < VEC; ++i) {
            const float x0 = x[i];
            const float x1 = y[i];
            x[i] = x0 * cosv[i] - x1 * sinv[i];
            y[i] = x1 * cosv[i] + x0 * sinv[i];
          }
        }
        ktune_ops::store_some<T, VEC>(it.dst + off, limit, vec && it.active, x);
        ktune_ops::store_some<T, VEC>(it.dst + kHalf + off, limit, vec && it.active, y);
      }
    }
  }
};

template <int HEAD_DIM, int LANES, int VEC, int HEADS, int ITEMS, int STEPS, int STAGES, bool GPTJ, typename T>
__global__ void __launch_bounds__(LANES* HEADS)
    ktune_rmsnorm_rope(const T* q, const T* k, const T* __restrict__ q_weight, const T* __restrict__ k_weight,
                       const float* __restrict__ cos_sin, const int* __restrict__ positions, T* q_out,
                       T* k_out, int tokens, int heads_q, int heads_kv, int max_pos, float eps) {
  using namespace ktune_ops;
  using Group = RopeGroup<HEAD_DIM, LANES, VEC, HEADS, ITEMS, GPTJ, T>;
  static_assert(Group::kChunks * LANES * VEC == Group::kHalf, "D/2 must be a multiple of LANES * VEC");
  static_assert(VEC % 2 == 0, "VEC must be even (GPT-J pairs lie within a vector)");
  static_assert((LANES * HEADS) % 32 == 0 && LANES <= 32, "whole warps; a head within a warp");
  static_assert(ITEMS >= 1 && STEPS >= 1 && STAGES >= 1 && (STAGES == 1 || STAGES <= STEPS),
                "ITEMS, STEPS >= 1; STAGES 1 or at most STEPS");
  constexpr int kThreads = LANES * HEADS;
  constexpr int kBytes = VEC * static_cast<int>(sizeof(T));

  const int group = static_cast<int>(threadIdx.x) / LANES;
  const Group g{q,       k,       q_weight, k_weight, cos_sin,  positions,
                q_out,   k_out,   tokens,   heads_q,  heads_kv, max_pos,
                eps,     static_cast<int>(threadIdx.x) % LANES,
                aligned_to(q, kBytes) && aligned_to(k, kBytes) && aligned_to(q_out, kBytes) &&
                    aligned_to(k_out, kBytes) && aligned_to(q_weight, kBytes) && aligned_to(k_weight, kBytes),
                aligned_to(cos_sin, 16)};
  // Step s, item j of this lane group: the block's (s * ITEMS + j)-th run of HEADS consecutive
  // items, so for each (s, j) the groups of a block read HEADS consecutive heads (contiguous memory).
  const unsigned first = blockIdx.x * static_cast<unsigned>(HEADS * ITEMS * STEPS) + static_cast<unsigned>(group);
  auto step_first = [&](int s) { return first + static_cast<unsigned>(s * ITEMS * HEADS); };

  if constexpr (STAGES == 1) {
    // A batch's q / k loads go to registers, held packed as T with only the positions; the weights
    // and the table row (L1 / L2 hits: every head of a token shares them) are loaded after the
    // reduction.
    auto from_memory = [&](int, int, const RopeItem<HEAD_DIM, T>& it, unsigned pos, int off, float* cs) {
      g.load_table(pos, off, it.active, cs);
    };
#pragma unroll
    for (int s = 0; s < STEPS; ++s) {
      typename Group::Batch batch;
      g.load(step_first(s), batch);
      g.finish(step_first(s), batch, from_memory);
    }
  } else {
    // The batches land in a shared-memory ring through cp.async, q / k and their table values,
    // STAGES - 1 batches in flight while one is reduced, rotated and stored: bytes in flight at no
    // register cost, and no memory round trip left between a batch's reduction and its stores
    // (the weights are L1 hits). The positions of every step are read first, so a stage's table
    // copies wait on nothing. Each thread reads back only what it copied itself: waiting for its
    // own copies is all the synchronisation there is.
    __shared__ typename Group::Raw ring[STAGES * Group::kVectors][kThreads];
    __shared__ typename Group::Piece table_ring[STAGES * ITEMS * Group::kChunks * Group::kPieces][kThreads];
    const int tid = static_cast<int>(threadIdx.x);
    unsigned pos[STEPS][ITEMS];
#pragma unroll
    for (int s = 0; s < STEPS; ++s) {
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) pos[s][j] = g.position(g.item(step_first(s) + static_cast<unsigned>(j * HEADS)));
    }
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      g.template stage<kThreads>(step_first(s), pos[s], s, ring, table_ring, tid);
      copy_async_commit();
    }
#pragma unroll
    for (int s = 0; s < STEPS; ++s) {
      if (s + STAGES - 1 < STEPS) {
        g.template stage<kThreads>(step_first(s + STAGES - 1), pos[s + STAGES - 1], (s + STAGES - 1) % STAGES, ring,
                                   table_ring, tid);
      }
      copy_async_commit();  // possibly empty: the group count stays one a step
      copy_async_wait<STAGES - 1>();
      const int slot = s % STAGES;
      auto from_ring = [&](int j, int c, const RopeItem<HEAD_DIM, T>& it, unsigned p, int off, float* cs) {
        if (g.cs_vec && it.active) {
          const typename Group::Piece(*t)[kThreads] = table_ring + ((slot * ITEMS + j) * Group::kChunks + c) * Group::kPieces;
          constexpr int kWords = Group::kPieceBytes / 4;
#pragma unroll
          for (int i = 0; i < Group::kPieces; ++i) {
            const typename Group::Piece piece = t[i][tid];
            const int* w = reinterpret_cast<const int*>(&piece);
#pragma unroll
            for (int e = 0; e < kWords; ++e) cs[i * kWords + e] = __int_as_float(w[e]);
          }
        } else {
          g.load_table(p, off, it.active, cs);
        }
      };
      typename Group::Batch batch;
      g.template land<kThreads>(step_first(s), pos[s], slot, ring, tid, batch);
      g.finish(step_first(s), batch, from_ring);
    }
  }
}
