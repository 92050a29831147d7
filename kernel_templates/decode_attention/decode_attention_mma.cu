// decode_attention, tensor-core template (sm_80+): the same problem, arguments, grid, workspace and
// combine as decode_attention.cu (one query token per sequence over a KV cache, split-KV, GQA),
// with the dot products on mma.sync m16n8k16 and the keys streamed through a cp.async ring.
//
// ktune_decode_attention_mma<D, G, KEYS, WARPS, STAGES, T>: grid (num_splits, heads_q / G, batch),
// WARPS warps. A block owns G <= 8 query heads of one K/V head and split s of the context (keys
// [s * chunk, (s + 1) * chunk) below len, chunk = ceil(seq / num_splits) rounded up to KEYS). The
// split's tiles of KEYS keys are dealt to the warps in turn (tile i to warp i % WARPS); every warp
// runs on its own: a STAGES-deep ring of K and V tiles in shared memory filled by cp.async (16
// bytes a lane a copy, keys past the end zero-filled), STAGES - 1 tiles in flight while it computes
// on one. A tile is computed transposed, so that the G <= 8 heads are the mma's N = 8 columns (no
// padded rows):
//   S^T [KEYS x 8] = K [KEYS x D] Q^T: K rows through ldmatrix as the A operand, q held in
//     registers as the B operand for the whole block (heads G..7 zero);
//   online softmax of each head (a column of S^T), base 2 (S scaled by scale * log2(e) in f32): a
//     lane holds two heads' scores of 2 KEYS / 16 keys; the max over the keys by three shuffles;
//   O^T [D x 8] += V^T P^T: V rows through ldmatrix.trans as the A operand, P's accumulators
//     packed to T and transposed in registers (movmatrix) into the B operand.
// Each warp ends with its partial (m, l, O) of its tiles (decode_attention_mma_block.cuh); the block
// merges its warps through shared memory (the ring is reused) and writes o or the split's partial
// (decode_attention_split.cuh). decode_attention_mma_cluster.cu merges the splits in the same launch.
// Shared memory (dynamic): WARPS * STAGES * 2 * KEYS * D * sizeof(T) bytes, 16-byte chunks XOR-
// swizzled so that cp.async writes and ldmatrix reads are conflict-free.
//
// PAGED: the cache is paged (block_table [batch, max_blocks], blocks of block_size keys, a multiple
// of 16: decode_attention_mma_block.cuh's KvPages); a warp looks a tile's blocks up once per 16 keys.
// K and V rows are read as 16-byte vectors: k and v 16-byte aligned. q and o element by element.
#include "decode_attention_mma_block.cuh"

template <int D, int G, int KEYS, int WARPS, int STAGES, bool PAGED, typename T>
__global__ void __launch_bounds__(WARPS * 32)
    ktune_decode_attention_mma(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                               T* __restrict__ o, float* __restrict__ workspace,
                               const int* __restrict__ context_lens, int heads_q, int heads_kv, int seq,
                               int seq_max, int num_splits, float scale, const int* __restrict__ block_table,
                               int block_size, int max_blocks, int num_blocks) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const int split = static_cast<int>(blockIdx.x);
  const int h0 = static_cast<int>(blockIdx.y) * G;
  const int b = static_cast<int>(blockIdx.z);
  ktune_attn::mma_block_partials<D, G, KEYS, WARPS, STAGES, PAGED, T>(
      q, k, v, context_lens, heads_q, heads_kv, seq, seq_max, num_splits, scale, split, h0, b,
      ktune_attn::KvPages{block_table, block_size, max_blocks, num_blocks}, smem);
  const ktune_attn::WarpPartials<D, G, WARPS> red(smem);
  ktune_attn::finish_block<D, G, WARPS>(red.acc, red.m, red.l, o, workspace, b, h0, heads_q, split,
                                        num_splits);
}
