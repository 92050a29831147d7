// decode_attention, tensor-core template with the splits merged in the same launch (sm_90): the
// blocks of decode_attention_mma.cu (decode_attention_mma_block.cuh), with the CLUSTER splits of one
// (sequence, G heads) in one thread block cluster (up to 16 blocks: past 8 the launch sites allow the
// non-portable size). No workspace and no combine kernel: a decode step
// at batch 1 to 8 is a few microseconds, of which a second launch was a measurable share.
//
// ktune_decode_attention_mma_cluster<D, G, KEYS, WARPS, STAGES, CLUSTER, T>: grid (CLUSTER, heads_q /
// G, batch), cluster (CLUSTER, 1, 1), WARPS warps; the arguments of ktune_decode_attention_mma, with
// o always written, workspace unused and num_splits == CLUSTER. Block r (cluster rank r == split r):
//   1. its warps' partial states over split r of the context (mma_block_partials);
//   2. merged into the block's one partial state (acc [G][D], m [G], l [G], f32, after the warps'
//      partials in shared memory);
//   3. a cluster barrier: every block's partial is written;
//   4. o for the elements (g, d) with index g * D + d in r * 32 WARPS + [0, 32 WARPS) + every
//      CLUSTER * 32 WARPS after: the CLUSTER blocks' partials of that element read through
//      distributed shared memory, merged in rank order (deterministic), normalised, stored;
//   5. a second cluster barrier: no block leaves while another still reads its shared memory.
// Shared memory (dynamic): the ring of decode_attention_mma.cu, which also holds steps 1 and 2.
#include "cluster.cuh"
#include "decode_attention_mma_block.cuh"

namespace ktune_attn {

/// Steps 2 to 5 above, after mma_block_partials.
template <int D, int G, int WARPS, int CLUSTER, typename T>
__device__ __forceinline__ void finish_cluster(unsigned char* smem, T* o, int b, int h0, int heads_q,
                                               unsigned rank) {
  constexpr int kThreads = WARPS * 32;
  const WarpPartials<D, G, WARPS> red(smem);
  float* part_acc = reinterpret_cast<float*>(smem + WarpPartials<D, G, WARPS>::kBytes);  // [G][D]
  float* part_m = part_acc + G * D;                                                     // [G]
  float* part_l = part_m + G;                                                           // [G]
  for (int idx = static_cast<int>(threadIdx.x); idx < G * D; idx += kThreads) {
    const int g = idx / D;
    const int d = idx % D;
    float big, sum, a;
    merge_warps<D, G, WARPS>(red.acc, red.m, red.l, g, d, big, sum, a);
    part_acc[idx] = a;
    if (d == 0) {
      part_m[g] = big;
      part_l[g] = sum;
    }
  }
  ktune_cluster::cluster_sync();
  for (int idx = static_cast<int>(rank) * kThreads + static_cast<int>(threadIdx.x); idx < G * D;
       idx += CLUSTER * kThreads) {
    const int g = idx / D;
    const int d = idx % D;
    float m[CLUSTER];
    float big = ktune_ops::neg_inf();
#pragma unroll
    for (int r = 0; r < CLUSTER; ++r) {
      m[r] = ktune_cluster::load_remote(part_m + g, static_cast<unsigned>(r));
      big = fmaxf(big, m[r]);
    }
    const float safe = big == ktune_ops::neg_inf() ? 0.0f : big;
    float sum = 0.0f;
    float a = 0.0f;
#pragma unroll
    for (int r = 0; r < CLUSTER; ++r) {
      const float x = exp2f(m[r] - safe);
      sum += ktune_cluster::load_remote(part_l + g, static_cast<unsigned>(r)) * x;
      a += ktune_cluster::load_remote(part_acc + idx, static_cast<unsigned>(r)) * x;
    }
    const size_t row = static_cast<size_t>(b) * heads_q + h0 + g;
    o[row * D + d] = ktune_dev::from_f32<T>(sum > 0.0f ? a / sum : 0.0f);
  }
  ktune_cluster::cluster_sync();
}

}  // namespace ktune_attn

template <int D, int G, int KEYS, int WARPS, int STAGES, int CLUSTER, bool PAGED, typename T>
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(WARPS * 32)
    ktune_decode_attention_mma_cluster(const T* __restrict__ q, const T* __restrict__ k,
                                       const T* __restrict__ v, T* __restrict__ o, float* __restrict__,
                                       const int* __restrict__ context_lens, int heads_q, int heads_kv,
                                       int seq, int seq_max, int, float scale,
                                       const int* __restrict__ block_table, int block_size, int max_blocks,
                                       int num_blocks) {
  static_assert(CLUSTER >= 2 && CLUSTER <= 16, "2 to 16 splits a cluster (past 8: a non-portable size)");
  static_assert(STAGES * KEYS * D * static_cast<int>(sizeof(T)) * 2 * WARPS >=
                    (WARPS + 1) * G * (D + 2) * static_cast<int>(sizeof(float)),
                "the ring holds the warps' partials and the block's");
  extern __shared__ __align__(1024) unsigned char smem[];
  const int split = static_cast<int>(blockIdx.x);  // == the cluster rank: cluster (CLUSTER, 1, 1)
  const int h0 = static_cast<int>(blockIdx.y) * G;
  const int b = static_cast<int>(blockIdx.z);
  ktune_attn::mma_block_partials<D, G, KEYS, WARPS, STAGES, PAGED, T>(
      q, k, v, context_lens, heads_q, heads_kv, seq, seq_max, CLUSTER, scale, split, h0, b,
      ktune_attn::KvPages{block_table, block_size, max_blocks, num_blocks}, smem);
  ktune_attn::finish_cluster<D, G, WARPS, CLUSTER, T>(smem, o, b, h0, heads_q, static_cast<unsigned>(split));
}
