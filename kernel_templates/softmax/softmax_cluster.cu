// softmax, cluster variant (sm_90): the softmax of softmax.cu (scale, masks, base-2 arithmetic,
// masked columns written 0) for long rows, reading x from DRAM once.
//
// A row is split over a cluster of CLUSTER blocks (grid (CLUSTER, rows), cluster (CLUSTER, 1, 1)):
// block b owns columns [b * seg, (b + 1) * seg) (seg a multiple of 16 bytes, from the spec). Thread
// 0 copies the segment's valid columns (rounded up to 16 bytes) into dynamic shared memory with bulk
// copies of 8 KB (cp.async.bulk, bulk_copy.cuh), each completing on its own mbarrier; the block
// reduces each piece as it lands (online) to a base-2 (max, sum of exp2(t - max)) of the segment,
// publishes it in shared memory, and after a cluster barrier
// every thread combines the cluster's CLUSTER partials through distributed shared memory
// (cluster.cuh): M = max m_i, S = sum s_i exp2(m_i - M). A second cluster barrier follows the reads
// (no block exits while another may still read its partial); then the block writes its segment of
// y from shared memory.
//
// The spec guarantees cols * sizeof(T) % 16 == 0, x and y 16-byte aligned, seg * sizeof(T) within
// the SM's shared memory, rows <= 65535.
#include "bulk_copy.cuh"
#include "cluster.cuh"
#include "ops_reduce.cuh"
#include "softmax_mask.cuh"

/// Bytes a bulk copy of a segment moves (its pieces complete on their own barriers), and the most
/// pieces a segment of 227 KB takes.
constexpr int kSoftmaxClusterPieceBytes = 8192;
constexpr int kSoftmaxClusterMaxPieces = 29;

template <int THREADS, int CLUSTER, int MASK, typename T>
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS)
    ktune_softmax_cluster(const T* __restrict__ x, T* __restrict__ y, const int* __restrict__ lengths,
                          int rows, int cols, float scale, int row_offset, int seg) {
  using namespace ktune_ops;
  using namespace ktune_async;
  constexpr int kVec = 16 / static_cast<int>(sizeof(T));
  constexpr int kPieceVecs = kSoftmaxClusterPieceBytes / 16;
  constexpr float kLog2e = 1.4426950408889634f;
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS a multiple of 32, at most 1024");
  static_assert(CLUSTER >= 1 && CLUSTER <= 8, "CLUSTER: 1..8 blocks (the portable cluster size)");
  using Vec = Packed<T, kVec>;
  __shared__ float scratch[THREADS / 32];
  __shared__ float partial[2];  // this block's (max, sum), read by the cluster
  __shared__ __align__(8) unsigned long long landed[kSoftmaxClusterMaxPieces];  // a piece's bytes arrived
  KTUNE_OPS_DYNAMIC_SMEM(smem);                                                 // the segment's columns as T

  const int t = static_cast<int>(threadIdx.x);
  const int row = static_cast<int>(blockIdx.y);
  const int begin = static_cast<int>(blockIdx.x) * seg;
  const int end = max(begin, min(begin + seg, cols));  // a segment past the row is empty
  const int n = ktune_softmax_detail::valid_prefix<MASK>(row, rows, cols, lengths, row_offset);
  const int valid = max(begin, min(end, n)) - begin;  // valid columns: [begin, begin + valid)
  const int vecs = (valid + kVec - 1) / kVec;         // whole 16-byte vectors to load (within the segment)
  const int pieces = (vecs + kPieceVecs - 1) / kPieceVecs;
  const size_t base = static_cast<size_t>(row) * static_cast<size_t>(cols);
  const unsigned bar0 = shared_address(landed);

  // Thread 0 copies the valid vectors in pieces, each completing on its own barrier, so the block
  // reduces the first pieces while the later ones are still in flight.
  if (t == 0) {
    for (int p = 0; p < pieces; ++p) mbar_init(bar0 + 8u * p, 1);
    mbar_init_fence();
  }
  __syncthreads();
  if (t == 0) {
    for (int p = 0; p < pieces; ++p) {
      const int first = p * kPieceVecs;
      const unsigned bytes = static_cast<unsigned>(min(kPieceVecs, vecs - first)) * 16u;
      mbar_arrive_expect_tx(bar0 + 8u * p, bytes);
      bulk_load(shared_address(smem + first), x + base + begin + first * kVec, bytes, bar0 + 8u * p);
    }
  }

  // This segment's base-2 (max, sum of exp2(t - max)), online over the pieces as they land: per
  // piece a thread's max first, then its sum rescaled to the new max.
  const float k = scale * kLog2e;
  float m = neg_inf();
  float s = 0.0f;
  for (int p = 0; p < pieces; ++p) {
    mbar_wait(bar0 + 8u * p, 0);
    const int stop = min(vecs, (p + 1) * kPieceVecs);
    float pm = m;
    for (int v = p * kPieceVecs + t; v < stop; v += THREADS) {
      Vec a;
      a.raw = smem[v];
      float f[kVec];
      a.unpack(f);
#pragma unroll
      for (int i = 0; i < kVec; ++i) pm = v * kVec + i < valid ? fmaxf(pm, f[i] * k) : pm;
    }
    if (pm == neg_inf()) continue;  // no valid column of this thread in the piece, nor before
    float add = 0.0f;
    for (int v = p * kPieceVecs + t; v < stop; v += THREADS) {
      Vec a;
      a.raw = smem[v];
      float f[kVec];
      a.unpack(f);
#pragma unroll
      for (int i = 0; i < kVec; ++i) add += v * kVec + i < valid ? fast_exp2(fmaf(f[i], k, -pm)) : 0.0f;
    }
    s = s * fast_exp2(m - pm) + add;  // m = -inf before the first valid piece: the product is 0
    m = pm;
  }
  const float seg_max = row_max<THREADS, 1>(m, scratch);
  s = row_sum<THREADS, 1>(m == neg_inf() ? 0.0f : s * fast_exp2(m - seg_max), scratch);
  if (t == 0) {
    partial[0] = seg_max;
    partial[1] = s;
  }
  ktune_cluster::cluster_sync();

  // The row's max and sum from the cluster's partials (max -inf and sum 0 for a segment without a
  // valid column; a row without one is all zeros).
  float pm[CLUSTER];
  float ps[CLUSTER];
  float big = neg_inf();
#pragma unroll
  for (int r = 0; r < CLUSTER; ++r) {
    pm[r] = ktune_cluster::load_remote(&partial[0], static_cast<unsigned>(r));
    ps[r] = ktune_cluster::load_remote(&partial[1], static_cast<unsigned>(r));
    big = fmaxf(big, pm[r]);
  }
  if (big == neg_inf()) big = 0.0f;
  float total = 0.0f;
#pragma unroll
  for (int r = 0; r < CLUSTER; ++r) total += pm[r] == neg_inf() ? 0.0f : ps[r] * fast_exp2(pm[r] - big);
  const float inv = total > 0.0f ? 1.0f / total : 0.0f;
  ktune_cluster::cluster_sync();  // every partial is read: a block may exit once its writes are issued

  // y for every column of the segment: the valid ones from shared memory, the masked ones 0.
  T* const yr = y + base + begin;
  const int width = end - begin;
  for (int v = t; v * kVec < width; v += THREADS) {
    Vec a;
    a.raw = v * kVec < valid ? smem[v] : make_int4(0, 0, 0, 0);
    float f[kVec];
    a.unpack(f);
#pragma unroll
    for (int i = 0; i < kVec; ++i) f[i] = v * kVec + i < valid ? fast_exp2(fmaf(f[i], k, -big)) * inv : 0.0f;
    a.pack(f);
    reinterpret_cast<int4*>(yr)[v] = a.raw;
  }
}
