// rmsnorm, bulk-copy pipeline (sm_90): y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * w, f32
// accumulation, T in and out; RESIDUAL as in rmsnorm.cu (s = T(x + residual) is normalised and also
// written to residual_out).
//
// A block of THREADS threads normalises STEPS consecutive rows, one at a time, from a ring of
// STAGES shared-memory row buffers. Thread 0 fills the ring with bulk copies (cp.async.bulk, one a
// row and input, completing on the stage's mbarrier), STAGES rows ahead, so a row's bytes are in
// flight while the block reduces and writes the rows before it, at no register cost. w is copied
// into shared memory once a block. Every thread reads 16-byte vectors of the stage twice (sum of
// squares, then the output).
// WRITE 0: the threads store y (and residual_out) from registers; the stage is refilled once the
//   block is done with it.
// WRITE 1: the threads write y into the stage in place and thread 0 stores it with one bulk copy a
//   row (and residual_out from the residual buffer); a stage is refilled once its stores have read
//   it, a row later, so STAGES - 2 rows are loading while one is processed.
//
// The spec guarantees: hidden * sizeof(T) a multiple of 16 and every pointer 16-byte aligned (bulk
// copies move 16-byte units), and the shared memory of (1 + STAGES * inputs) rows fits the SM.
#include "bulk_copy.cuh"
#include "ops_reduce.cuh"

template <int THREADS, int STAGES, int STEPS, int WRITE, bool RESIDUAL, typename T>
__global__ void __launch_bounds__(THREADS)
    ktune_rmsnorm_bulk(const T* x, const T* residual, const T* __restrict__ w, T* y, T* residual_out,
                       int rows, int hidden, float eps) {
  using namespace ktune_ops;
  using namespace ktune_async;
  constexpr int kVec = 16 / static_cast<int>(sizeof(T));
  constexpr int kInputs = RESIDUAL ? 2 : 1;
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS a multiple of 32, at most 1024");
  static_assert(STAGES >= 2 && STEPS >= 1 && (WRITE == 0 || WRITE == 1),
                "STAGES >= 2, STEPS >= 1, WRITE 0|1");
  using Vec = Packed<T, kVec>;
  __shared__ float scratch[THREADS / 32];
  __shared__ __align__(8) unsigned long long bars[STAGES + 1];  // a stage's row landed; w landed
  KTUNE_OPS_DYNAMIC_SMEM(smem);                                 // w | stage 0 inputs | stage 1 ...

  const int t = static_cast<int>(threadIdx.x);
  const int vecs = hidden / kVec;
  const unsigned row_bytes = static_cast<unsigned>(hidden) * static_cast<unsigned>(sizeof(T));
  const int first = static_cast<int>(blockIdx.x) * STEPS;
  const int count = min(STEPS, rows - first);
  int4* const w_s = smem;
  auto buffer = [&](int stage, int input) { return smem + (1 + stage * kInputs + input) * vecs; };
  const unsigned bar0 = shared_address(bars);
  const unsigned w_bar = bar0 + 8u * STAGES;
  auto row_offset = [&](int j) { return static_cast<size_t>(first + j) * static_cast<size_t>(hidden); };
  // Thread 0: the inputs of row j into stage j % STAGES.
  auto issue = [&](int j) {
    const int s = j % STAGES;
    const unsigned bar = bar0 + 8u * s;
    mbar_arrive_expect_tx(bar, kInputs * row_bytes);
    bulk_load(shared_address(buffer(s, 0)), x + row_offset(j), row_bytes, bar);
    if (RESIDUAL) bulk_load(shared_address(buffer(s, 1)), residual + row_offset(j), row_bytes, bar);
  };

  if (t == 0) {
    for (int s = 0; s <= STAGES; ++s) mbar_init(bar0 + 8u * s, 1);
    mbar_init_fence();
  }
  __syncthreads();
  if (t == 0) {
    mbar_arrive_expect_tx(w_bar, row_bytes);
    bulk_load(shared_address(w_s), w, row_bytes, w_bar);
    for (int j = 0; j < STAGES && j < count; ++j) issue(j);
  }
  mbar_wait(w_bar, 0);

  for (int j = 0; j < count; ++j) {
    const int s = j % STAGES;
    mbar_wait(bar0 + 8u * s, static_cast<unsigned>(j / STAGES) & 1u);
    int4* const xs = buffer(s, 0);
    int4* const rs = RESIDUAL ? buffer(s, 1) : nullptr;
    const size_t off = row_offset(j);
    float ss = 0.0f;
    for (int v = t; v < vecs; v += THREADS) {
      Vec a;
      a.raw = xs[v];
      float f[kVec];
      a.unpack(f);
      if (RESIDUAL) {
        Vec r;
        r.raw = rs[v];
        float g[kVec];
        r.unpack(g);
#pragma unroll
        for (int i = 0; i < kVec; ++i) f[i] += g[i];
        a.pack(f);  // s = T(x + residual): what residual_out holds and what is normalised
        a.unpack(f);
        xs[v] = a.raw;  // this thread's own vector, read above
        if (WRITE == 1) {
          rs[v] = a.raw;
        } else {
          reinterpret_cast<int4*>(residual_out + off)[v] = a.raw;
        }
      }
#pragma unroll
      for (int i = 0; i < kVec; ++i) ss = fmaf(f[i], f[i], ss);
    }
    ss = row_sum<THREADS, 1>(ss, scratch);
    const float inv = rsqrtf(ss / static_cast<float>(hidden) + eps);
    for (int v = t; v < vecs; v += THREADS) {
      Vec a;
      Vec g;
      a.raw = xs[v];
      g.raw = w_s[v];
      float f[kVec];
      float h[kVec];
      a.unpack(f);
      g.unpack(h);
#pragma unroll
      for (int i = 0; i < kVec; ++i) f[i] = f[i] * inv * h[i];
      a.pack(f);
      if (WRITE == 1) {
        xs[v] = a.raw;
      } else {
        reinterpret_cast<int4*>(y + off)[v] = a.raw;
      }
    }
    if (WRITE == 1) async_proxy_fence();
    __syncthreads();  // the stage is read (WRITE 0) or holds the finished row (WRITE 1)
    if (t == 0) {
      if (WRITE == 0) {
        if (j + STAGES < count) issue(j + STAGES);
      } else {
        bulk_store(y + off, shared_address(xs), row_bytes);
        if (RESIDUAL) bulk_store(residual_out + off, shared_address(rs), row_bytes);
        bulk_commit();
        bulk_wait_read<1>();  // the previous row's stores have left its stage
        if (j >= 1 && j - 1 + STAGES < count) issue(j - 1 + STAGES);
      }
    }
  }
  if (WRITE == 1 && t == 0) bulk_wait_all();
}
