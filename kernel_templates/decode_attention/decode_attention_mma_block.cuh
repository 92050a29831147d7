// decode_attention, tensor-core templates: what a block of decode_attention_mma.cu and of
// decode_attention_mma_cluster.cu does before its last step. The block owns G <= 8 query heads of one
// K/V head and split `split` of the context; its warps stream their tiles of KEYS keys through a
// cp.async ring each, compute on mma.sync and leave their partial states in shared memory (the ring
// reused) for the block's last step. The method is described in decode_attention_mma.cu.
#pragma once

#include "decode_attention_split.cuh"
#include "gemm_mma_primitives.cuh"
#include "ktune_device.cuh"

namespace ktune_attn {

/// Two values as the 32-bit register of an mma fragment (lo in the low half).
template <typename T>
__device__ __forceinline__ unsigned pack_pair(T lo, T hi) {
  typename ktune_mma::Pair<T>::type pair;
  pair.x = lo;
  pair.y = hi;
  return *reinterpret_cast<const unsigned*>(&pair);
}

/// Asynchronous 16-byte copy to shared address `dst`; copies `src_bytes` (0 or 16), zero-fills the rest.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}

/// The warp's 8x8 matrix of 16-bit values, each lane holding (row lane / 4, columns 2 (lane % 4)
/// and + 1) in one register, transposed: the lane then holds those entries of the transpose.
__device__ __forceinline__ unsigned transpose_8x8(unsigned x) {
  unsigned y;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(y) : "r"(x));
  return y;
}

/// Where a sequence's keys live. Contiguous (PAGED false): key t of K/V head h of sequence b at
/// row (b * heads_kv + h) * seq_max + t. Paged: block_table int32 [batch, max_blocks] names the
/// block of every block_size keys; the caches are [num_blocks, heads_kv, block_size, D] and key t
/// is row t % block_size of block block_table[b][t / block_size]. block_size is a multiple of 16,
/// so 16 keys from a multiple of 16 share a block; a block id outside [0, num_blocks) reads block 0
/// (never outside the cache).
struct KvPages {
  const int* table = nullptr;
  int block_size = 0;
  int max_blocks = 0;
  int num_blocks = 0;
};

/// The warps' partial states in shared memory once their rings are drained: acc [WARPS][G][D], then
/// m and l [WARPS][G], f32, from the start of the block's dynamic shared memory.
template <int D, int G, int WARPS>
struct WarpPartials {
  static constexpr int kBytes = WARPS * G * (D + 2) * static_cast<int>(sizeof(float));
  float (*acc)[G][D];
  float (*m)[G];
  float (*l)[G];
  __device__ explicit WarpPartials(unsigned char* smem)
      : acc(reinterpret_cast<float (*)[G][D]>(smem)),
        m(reinterpret_cast<float (*)[G]>(smem + WARPS * G * D * sizeof(float))),
        l(reinterpret_cast<float (*)[G]>(smem + WARPS * G * (D + 1) * sizeof(float))) {}
};

/// Block (split, h0 / G, b)'s work: its warps' partial states over split `split` of the context,
/// written to WarpPartials<D, G, WARPS>(smem) (`smem` holds the warps' rings while they run). Ends
/// after a __syncthreads: every partial is written and visible to the block.
template <int D, int G, int KEYS, int WARPS, int STAGES, bool PAGED, typename T>
__device__ __forceinline__ void mma_block_partials(const T* __restrict__ q, const T* __restrict__ k,
                                                   const T* __restrict__ v,
                                                   const int* __restrict__ context_lens, int heads_q,
                                                   int heads_kv, int seq, int seq_max, int num_splits,
                                                   float scale, int split, int h0, int b, KvPages pages,
                                                   unsigned char* smem) {
  using namespace ktune_ops;
  using ktune_mma::ldmatrix_x4;
  using ktune_mma::ldmatrix_x4_trans;
  using ktune_mma::mma_16816;
  using ktune_mma::smem_u32;
  constexpr int kRowBytes = D * static_cast<int>(sizeof(T));
  constexpr int kCpr = kRowBytes / 16;  // 16-byte chunks a row
  constexpr int kTileBytes = KEYS * D * static_cast<int>(sizeof(T));  // one K (or V) tile
  constexpr int kStageBytes = 2 * kTileBytes;
  constexpr int kKeyBlocks = KEYS / 16;  // m16 blocks of S^T
  constexpr int kDSteps = D / 16;         // k16 steps of K Q^T, m16 blocks of O^T
  constexpr int kCopies = KEYS * kCpr / 32;  // 16-byte copies a lane a tile, of K and of V
  static_assert(KEYS % 16 == 0 && kCopies >= 1 && kCopies * 32 == KEYS * kCpr, "KEYS: 16, 32, 64");
  static_assert(D % 32 == 0 && kCpr >= 8, "head_dim a multiple of 32, rows of at least 128 bytes");
  static_assert(G >= 1 && G <= 8, "1 to 8 heads a block (the 8 columns of the mma tile)");
  static_assert(STAGES >= 2, "a ring of at least two tiles");
  static_assert(STAGES * KEYS * D >= G * (D + 2), "the ring holds the warps' partials afterwards");
  constexpr float kLog2e = 1.4426950408889634f;

  const int hkv = h0 / (heads_q / heads_kv);
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int quad = lane / 4;        // the accumulator row (key or d) of this lane's c0, c1
  const int pair = (lane % 4) * 2;  // its first column (head) of the n8 tile

  int len = seq;
  if (context_lens != nullptr) len = min(max(context_lens[b], 0), seq);
  const int per_split = (seq + num_splits - 1) / num_splits;
  const int chunk = (per_split + KEYS - 1) / KEYS * KEYS;
  const int begin = min(split * chunk, len);
  const int end = min(begin + chunk, len);
  const int tiles = (end - begin + KEYS - 1) / KEYS;
  const int my_tiles = warp < tiles ? (tiles - warp + WARPS - 1) / WARPS : 0;

  // Paged: the block ids of this warp's 16-key groups, read 32 at a time: lane j holds the id of
  // group g of tile t of the current batch of kTilesPerBatch tiles, j = t * kKeyBlocks + g, and the
  // group's row within its block. The next batch is read when the current one is taken, so only the
  // first read's latency is waited for (issued here, before q is read); the rest hide behind
  // kTilesPerBatch tiles of work. When a batch is taken, each lane turns its id into the cache row
  // of its group once, so a tile's copies wait on one shuffle of a ready row, not on the
  // arithmetic of a row (a division by the run-time block size and 64-bit products) every tile.
  constexpr int kTilesPerBatch = 32 / kKeyBlocks;
  auto fetch_batch = [&](int batch, unsigned& offset) -> unsigned {
    offset = 0u;
    if (!PAGED) return 0u;
    const int t = batch * kTilesPerBatch + lane / kKeyBlocks;
    const int key = begin + (t * WARPS + warp) * KEYS + 16 * (lane % kKeyBlocks);
    if (t >= my_tiles || key >= end) return 0u;
    const int block = key / pages.block_size;
    offset = static_cast<unsigned>(key - block * pages.block_size);
    return static_cast<unsigned>(__ldg(pages.table + static_cast<size_t>(b) * pages.max_blocks + block));
  };
  // The cache row of a group from its block id and its row within the block; a block id outside
  // [0, num_blocks) reads block 0.
  auto paged_row = [&](unsigned id, unsigned offset) -> size_t {
    if (id >= static_cast<unsigned>(pages.num_blocks)) id = 0u;
    return (static_cast<size_t>(id) * heads_kv + hkv) * pages.block_size + offset;
  };
  unsigned batch_offset = 0u, next_offset = 0u;
  unsigned batch_ids = fetch_batch(0, batch_offset), next_ids = fetch_batch(1, next_offset);
  int batch_now = -1;  // the batch whose rows batch_rows holds (none before the first tile)
  size_t batch_rows = 0;

  // q^T as B fragments of each k16 step: b0 = (d pair..pair+1, head quad), b1 = d + 8; heads >= G
  // are zero.
  unsigned qb[kDSteps][2];
  {
    const T* qr = q + (static_cast<size_t>(b) * heads_q + h0 + quad) * D;
    const T zero = ktune_dev::from_f32<T>(0.0f);
#pragma unroll
    for (int s = 0; s < kDSteps; ++s) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int d = s * 16 + h * 8 + pair;
        qb[s][h] = ktune_attn::pack_pair<T>(quad < G ? qr[d] : zero, quad < G ? qr[d + 1] : zero);
      }
    }
  }
  const size_t head_base = (static_cast<size_t>(b) * heads_kv + hkv) * static_cast<size_t>(seq_max) * D;
  unsigned char* ring = smem + warp * STAGES * kStageBytes;

  // Byte offset of 16-byte chunk ch of row r of a tile: r * kRowBytes + ch * 16 with chunk bits 0..2
  // XORed by r & 7 (ktune_mma::Swizzle's layout for 8 or more chunks a row), written as
  // (r * kRowBytes + ch * 16) ^ ((r & 7) << 4): the ring's stage bases are multiples of 128 bytes,
  // so the XOR may be applied to the whole shared address, which varies with the stage. Addresses
  // are then formed in the loop rather than kept in registers for every (copy, matrix).
  constexpr int kRowsPerCopy = 32 / kCpr;
  constexpr int kCopiesPerGroup = 16 / kRowsPerCopy;  // copies of a lane in 16 consecutive keys
  const int copy_row = lane / kCpr;  // row (and chunk) of this lane's first copy of a tile
  const int copy_lin = copy_row * kRowBytes + (lane % kCpr) * 16;
  auto load_tile = [&](int i) {
    const int key0 = begin + (i * WARPS + warp) * KEYS;
    const unsigned sk = smem_u32(ring + (i % STAGES) * kStageBytes);
    const int live_rows = end - key0 - copy_row;  // copies c with c * kRowsPerCopy < this are live
    if (PAGED && i / kTilesPerBatch != batch_now) {  // warp-uniform: i grows by one a call
      if (batch_now >= 0) {
        batch_ids = next_ids;
        batch_offset = next_offset;
        next_ids = fetch_batch(i / kTilesPerBatch + 1, next_offset);
      }
      batch_now = i / kTilesPerBatch;
      batch_rows = paged_row(batch_ids, batch_offset);
    }
    // The cache row (in elements of D, from k / v) of key key0 + 16 g of this K/V head (a block
    // never splits the 16 keys of a group).
    size_t group_row[kKeyBlocks];
#pragma unroll
    for (int g = 0; g < kKeyBlocks; ++g) {
      const size_t row = PAGED ? __shfl_sync(0xffffffffu, batch_rows, (i % kTilesPerBatch) * kKeyBlocks + g)
                               : head_base / D + static_cast<size_t>(key0 + 16 * g);
      group_row[g] = key0 + 16 * g < end ? row : 0;
    }
#pragma unroll
    for (int c = 0; c < kCopies; ++c) {
      const bool live = c * kRowsPerCopy < live_rows;
      const int g = c / kCopiesPerGroup;
      const size_t row = group_row[g] + static_cast<size_t>(copy_row + c * kRowsPerCopy - 16 * g);
      const size_t off = live ? row * D + (lane % kCpr) * 8 : 0;
      const unsigned x = static_cast<unsigned>((copy_row + c * kRowsPerCopy) & 7) << 4;
      const unsigned dst = (sk + copy_lin + c * kRowsPerCopy * kRowBytes) ^ x;
      ktune_attn::cp_async16(dst, k + off, live ? 16 : 0);
      ktune_attn::cp_async16(dst + kTileBytes, v + off, live ? 16 : 0);
    }
  };
  // ldmatrix row addresses: K (A of S^T) rows 16 kb + (lane / 8 % 2) * 8 + lane % 8, chunk 2 ds +
  // lane / 16; V (A of O^T, transposed) rows 16 kb + (lane / 16) * 8 + lane % 8, chunk 2 d + lane / 8
  // % 2. Both rows are lane % 8 modulo 8.
  const unsigned k_lin = ((lane / 8 % 2) * 8 + lane % 8) * kRowBytes + (lane / 16) * 16;
  const unsigned v_lin = ((lane / 16) * 8 + lane % 8) * kRowBytes + (lane / 8 % 2) * 16;
  const unsigned lane_xor = static_cast<unsigned>(lane % 8) << 4;

  // The online-softmax state of heads pair and pair + 1 (columns of S^T and O^T).
  float m[2] = {neg_inf(), neg_inf()};
  float l[2] = {0.0f, 0.0f};
  float acc[kDSteps][4];  // O^T: rows d = 16 i + quad (+ 8), columns heads pair, pair + 1
#pragma unroll
  for (int i = 0; i < kDSteps; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;
  const float k2 = scale * kLog2e;

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < my_tiles) load_tile(s);
    ktune_dev::cp_async_commit();
  }
  for (int i = 0; i < my_tiles; ++i) {
    ktune_dev::cp_async_wait<STAGES - 2>();
    __syncwarp();  // tile i visible to the whole warp; stage (i - 1) % STAGES free for refilling
    if (i + STAGES - 1 < my_tiles) load_tile(i + STAGES - 1);
    ktune_dev::cp_async_commit();
    const unsigned sk = smem_u32(ring + (i % STAGES) * kStageBytes);
    const unsigned sv = sk + kTileBytes;
    const int key0 = begin + (i * WARPS + warp) * KEYS;

    // S^T = K Q^T; matrices of an A fragment: keys +0..7 / +8..15 x d chunks 2 ds, 2 ds + 1.
    float s[kKeyBlocks][4];
#pragma unroll
    for (int kb = 0; kb < kKeyBlocks; ++kb) {
      s[kb][0] = s[kb][1] = s[kb][2] = s[kb][3] = 0.0f;
#pragma unroll
      for (int ds = 0; ds < kDSteps; ++ds) {
        unsigned ka[4];
        ldmatrix_x4(ka, (sk + k_lin + 16 * kb * kRowBytes + 32 * ds) ^ lane_xor);
        mma_16816<T>(s[kb], ka, qb[ds][0], qb[ds][1]);
      }
    }

    // Online softmax of heads pair, pair + 1 over the tile: this lane's keys 16 kb + quad (+ 8).
    float mt[2] = {m[0], m[1]};
#pragma unroll
    for (int kb = 0; kb < kKeyBlocks; ++kb) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = key0 + 16 * kb + quad + (e / 2) * 8;
        const float x = key < end ? s[kb][e] * k2 : neg_inf();
        s[kb][e] = x;
        mt[e % 2] = fmaxf(mt[e % 2], x);
      }
    }
    float base[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
      for (int off = 4; off < 32; off *= 2) mt[h] = fmaxf(mt[h], __shfl_xor_sync(0xffffffffu, mt[h], off));
      base[h] = mt[h] == neg_inf() ? 0.0f : mt[h];
      const float alpha = exp2f(m[h] - base[h]);
      m[h] = mt[h];
      l[h] *= alpha;
#pragma unroll
      for (int d = 0; d < kDSteps; ++d) {
        acc[d][h] *= alpha;
        acc[d][h + 2] *= alpha;
      }
    }
    // P^T as B fragments: keys 16 kb + 0..7 (b0) and + 8..15 (b1) x heads, transposed in registers.
    unsigned pb[kKeyBlocks][2];
#pragma unroll
    for (int kb = 0; kb < kKeyBlocks; ++kb) {
      float p[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        p[e] = exp2f(s[kb][e] - base[e % 2]);
        l[e % 2] += p[e];
      }
      pb[kb][0] = ktune_attn::transpose_8x8(
          ktune_attn::pack_pair<T>(ktune_dev::from_f32<T>(p[0]), ktune_dev::from_f32<T>(p[1])));
      pb[kb][1] = ktune_attn::transpose_8x8(
          ktune_attn::pack_pair<T>(ktune_dev::from_f32<T>(p[2]), ktune_dev::from_f32<T>(p[3])));
    }
    // O^T += V^T P^T; matrices of an A fragment: keys 16 kb + 0..7 / + 8..15 x d chunks 2 d, 2 d + 1,
    // each transposed.
#pragma unroll
    for (int kb = 0; kb < kKeyBlocks; ++kb) {
#pragma unroll
      for (int d = 0; d < kDSteps; ++d) {
        unsigned va[4];
        ldmatrix_x4_trans(va, (sv + v_lin + 16 * kb * kRowBytes + 32 * d) ^ lane_xor);
        mma_16816<T>(acc[d], va, pb[kb][0], pb[kb][1]);
      }
    }
  }
  ktune_dev::cp_async_wait<0>();
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int off = 4; off < 32; off *= 2) l[h] += __shfl_xor_sync(0xffffffffu, l[h], off);
  }
  __syncthreads();  // every warp done with its ring: it now holds the partials

  const WarpPartials<D, G, WARPS> red(smem);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int head = pair + h;
    if (head < G) {
#pragma unroll
      for (int d = 0; d < kDSteps; ++d) {
        red.acc[warp][head][16 * d + quad] = acc[d][h];
        red.acc[warp][head][16 * d + quad + 8] = acc[d][h + 2];
      }
      if (quad == 0) {
        red.m[warp][head] = m[h];
        red.l[warp][head] = l[h];
      }
    }
  }
  __syncthreads();
}

}  // namespace ktune_attn
