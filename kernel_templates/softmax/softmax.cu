// softmax: y[r, c] = exp(s x[r, c] - max) / sum over the row's unmasked columns, f32, T in and out,
// for the columns c < n(r) that the mask leaves; masked columns are written 0, and a row with no
// unmasked column is all zeros. MASK (from the problem's mode) gives the valid prefix n(r):
//   0 none:    n = cols
//   1 causal:  column c is masked when c > r + row_offset, so n = clamp(r + row_offset + 1, 0, cols)
//              (the spec passes row_offset = max(cols - rows, 0): the last row sees every column)
//   2 padding: n = lengths[r] (int32) taken modulo cols + 1 as unsigned (so no value can read past
//              the row)
// Masked columns are not read. Computed in base 2: t = x * scale * log2(e), y = exp2(t - max) / sum.
//
// A block holds ROWS row groups of THREADS threads (a multiple of 32); thread t owns the vectors at
// columns (c * THREADS + t) * VEC. CHUNKS > 0: one pass, the row in registers (CHUNKS vectors a
// thread, CHUNKS = ceil(cols / (THREADS * VEC)) from the shape): read once, written once.
// CHUNKS == 0: online, for rows of any length (up to 256K columns and beyond): a running (max, sum)
// per thread over its vectors, combined over the row group, then a second read that writes y.
// Vector path when the row's x and y are aligned to VEC * sizeof(T); otherwise per element.
//
// Two more kernels for long rows, below ktune_softmax: ktune_softmax_staged (ONLINE 2) reads the
// row from DRAM once into shared memory, and ktune_softmax_partial + ktune_softmax_split_finish
// (SPLIT > 1) spread a row over SPLIT blocks.
#include "ops_reduce.cuh"
#include "softmax_mask.cuh"

namespace ktune_softmax_detail {

/// Vectors a thread loads before it uses any of them in the streaming loops (UNROLL * VEC *
/// sizeof(T) bytes in flight a thread: 64 bytes for 16-byte vectors).
constexpr int kUnroll = 4;

/// Running (max, sum of exp2(t - max)) of thread t over the vectors at columns begin + (j * THREADS +
/// t) * VEC below `end` of the row `xr` (t = x * k); columns at or past n read as -inf. Loads
/// kUnroll vectors ahead of their math. m stays -inf (and s 0) when the thread saw no valid column.
template <int THREADS, int VEC, typename T>
__device__ __forceinline__ void online_span(const T* xr, int begin, int end, int n, bool vec, float k, int t,
                                            float& m, float& s) {
  using namespace ktune_ops;
  const int stop = min(end, n);
  for (int base = begin + t * VEC; base < stop; base += kUnroll * THREADS * VEC) {
    Packed<T, VEC> p[kUnroll];  // packed as loaded: half the registers of f32 for 16-bit types
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int col = base + u * THREADS * VEC;
      const int limit = stop - col;
      if (limit > 0) p[u].load(xr + col, limit, vec && limit >= VEC);
    }
    float vm = m;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int limit = stop - (base + u * THREADS * VEC);
      float f[VEC];
      p[u].unpack(f);
#pragma unroll
      for (int i = 0; i < VEC; ++i) vm = i < limit ? fmaxf(vm, f[i] * k) : vm;
    }
    // vm is finite: base < stop, so the first element of p[0] is a valid column.
    float add = 0.0f;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int limit = stop - (base + u * THREADS * VEC);
      float f[VEC];
      p[u].refresh();
      p[u].unpack(f);
#pragma unroll
      for (int i = 0; i < VEC; ++i) add += i < limit ? fast_exp2(fmaf(f[i], k, -vm)) : 0.0f;
    }
    s = s * fast_exp2(m - vm) + add;  // m = -inf on the first batch: fast_exp2 gives 0 and s is 0
    m = vm;
  }
}

}  // namespace ktune_softmax_detail

template <int THREADS, int ROWS, int VEC, int CHUNKS, int MASK, typename T>
__global__ void __launch_bounds__(THREADS* ROWS)
    ktune_softmax(const T* __restrict__ x, T* __restrict__ y, const int* __restrict__ lengths, int rows,
                  int cols, float scale, int row_offset) {
  using namespace ktune_ops;
  static_assert(THREADS % 32 == 0 && THREADS * ROWS <= 1024, "THREADS a multiple of 32, block <= 1024");
  static_assert(MASK >= 0 && MASK <= 2, "MASK: 0 none, 1 causal, 2 padding");
  constexpr int kBytes = VEC * static_cast<int>(sizeof(T));
  constexpr float kLog2e = 1.4426950408889634f;
  __shared__ float scratch[ROWS * THREADS / 32];

  const int group = static_cast<int>(threadIdx.x) / THREADS;
  const int t = static_cast<int>(threadIdx.x) % THREADS;
  const int row = static_cast<int>(blockIdx.x) * ROWS + group;
  const bool active = row < rows;
  const size_t base = static_cast<size_t>(active ? row : 0) * static_cast<size_t>(cols);
  const T* xr = x + base;
  T* yr = y + base;
  const bool vec = aligned_to(xr, kBytes) && aligned_to(yr, kBytes);
  int n = cols;
  if (MASK == 1) n = min(cols, max(0, row + row_offset + 1));
  if (MASK == 2)
    n = active ? static_cast<int>(static_cast<unsigned>(lengths[row]) % (static_cast<unsigned>(cols) + 1u))
               : 0;
  const int len = active ? cols : 0;
  if (!active) n = 0;
  const float k = scale * kLog2e;
  const float neg_inf = ktune_ops::neg_inf();

  // The vector at `col` in base-2 units, -inf past n.
  // The second (last) read of the online mode: evict-first.
  auto load_t = [&](int col, float* v) {
    const int limit = n - col;
    load_some<T, VEC, true>(xr + col, limit, vec && limit >= VEC, 0.0f, v);
#pragma unroll
    for (int i = 0; i < VEC; ++i) v[i] = i < limit ? v[i] * k : neg_inf;
  };
  auto store_y = [&](int col, const float* v, float m, float inv) {
    const int limit = len - col;
    float out[VEC];
#pragma unroll
    for (int i = 0; i < VEC; ++i) out[i] = col + i < n ? fast_exp2(v[i] - m) * inv : 0.0f;
    store_some<T, VEC>(yr + col, limit, vec && limit >= VEC, out);
  };

  if (CHUNKS > 0) {
    // The row stays in registers packed as T (half the registers of f32 for f16 / bf16); each pass
    // unpacks and scales it again, which costs a few ALU operations and no memory traffic.
    constexpr int kChunks = CHUNKS > 0 ? CHUNKS : 1;
    Packed<T, VEC> v[kChunks];
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int col = (c * THREADS + t) * VEC;
      v[c].template load<true>(xr + col, n - col, vec && n - col >= VEC);  // read once: evict-first
    }
    auto scaled = [&](int c, float* f) {
      const int col = (c * THREADS + t) * VEC;
      v[c].refresh();
      v[c].unpack(f);
#pragma unroll
      for (int i = 0; i < VEC; ++i) f[i] = col + i < n ? f[i] * k : neg_inf;
    };
    float m = neg_inf;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      float f[VEC];
      scaled(c, f);
#pragma unroll
      for (int i = 0; i < VEC; ++i) m = fmaxf(m, f[i]);
    }
    m = row_max<THREADS, ROWS>(m, scratch);
    if (m == neg_inf) m = 0.0f;  // no unmasked column: every exp2 below is 0
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      float f[VEC];
      scaled(c, f);
#pragma unroll
      for (int i = 0; i < VEC; ++i) s += fast_exp2(f[i] - m);
    }
    s = row_sum<THREADS, ROWS>(s, scratch);
    const float inv = s > 0.0f ? 1.0f / s : 0.0f;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      float f[VEC];
      scaled(c, f);
      store_y((c * THREADS + t) * VEC, f, m, inv);
    }
  } else {
    float m = neg_inf;
    float s = 0.0f;
    ktune_softmax_detail::online_span<THREADS, VEC, T>(xr, 0, n, n, vec, k, t, m, s);
    float big = row_max<THREADS, ROWS>(m, scratch);
    if (big == neg_inf) big = 0.0f;
    s = row_sum<THREADS, ROWS>(m == neg_inf ? 0.0f : s * fast_exp2(m - big), scratch);
    const float inv = s > 0.0f ? 1.0f / s : 0.0f;
#pragma unroll 2
    for (int col = t * VEC; col < len; col += THREADS * VEC) {
      float v[VEC];
      load_t(col, v);
      store_y(col, v, big, inv);
    }
  }
}

// ONLINE 2 (staged): one row a block of THREADS threads; the row's valid prefix is read from DRAM
// once into dynamic shared memory as T (the spec asks for cols * sizeof(T) rounded up to 16 bytes),
// with kUnroll vectors a thread in flight and only a running max on the way; then the sum of exp2
// and the output come from shared memory. Several blocks an SM (64 KB a 32K-column bf16 row: 3)
// overlap one row's loads with another's math and stores.
template <int THREADS, int VEC, int MASK, typename T>
__global__ void __launch_bounds__(THREADS)
    ktune_softmax_staged(const T* __restrict__ x, T* __restrict__ y, const int* __restrict__ lengths,
                         int rows, int cols, float scale, int row_offset) {
  using namespace ktune_ops;
  using ktune_softmax_detail::kUnroll;
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS a multiple of 32, at most 1024");
  constexpr int kBytes = VEC * static_cast<int>(sizeof(T));
  constexpr float kLog2e = 1.4426950408889634f;
  KTUNE_OPS_DYNAMIC_SMEM(staged_raw);
  T* staged = reinterpret_cast<T*>(staged_raw);
  __shared__ float scratch[THREADS / 32];

  const int row = static_cast<int>(blockIdx.x);
  const int t = static_cast<int>(threadIdx.x);
  const size_t base = static_cast<size_t>(row < rows ? row : 0) * static_cast<size_t>(cols);
  const T* xr = x + base;
  T* yr = y + base;
  const bool vec = aligned_to(xr, kBytes) && aligned_to(yr, kBytes);
  const int n = ktune_softmax_detail::valid_prefix<MASK>(row, rows, cols, lengths, row_offset);
  const int len = row < rows ? cols : 0;
  const float k = scale * kLog2e;

  // Stage the valid prefix; columns of the last partial vector at or past n are staged as 0 and
  // never used.
  float m = neg_inf();
  for (int b = t * VEC; b < n; b += kUnroll * THREADS * VEC) {
    Packed<T, VEC> p[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int col = b + u * THREADS * VEC;
      const int limit = n - col;
      if (limit > 0) p[u].template load<true>(xr + col, limit, vec && limit >= VEC);  // read once
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int col = b + u * THREADS * VEC;
      const int limit = n - col;
      if (limit > 0) {
        p[u].store(staged + col, VEC, true);
        float f[VEC];
        p[u].unpack(f);
#pragma unroll
        for (int i = 0; i < VEC; ++i) m = i < limit ? fmaxf(m, f[i] * k) : m;
      }
    }
  }
  float mk = row_max<THREADS, 1>(m, scratch);
  if (mk == neg_inf()) mk = 0.0f;  // no unmasked column: the row is all zeros
  float s = 0.0f;
  for (int col = t * VEC; col < n; col += THREADS * VEC) {
    Packed<T, VEC> p;
    p.load(staged + col, VEC, true);
    float f[VEC];
    p.unpack(f);
#pragma unroll
    for (int i = 0; i < VEC; ++i) s += col + i < n ? fast_exp2(fmaf(f[i], k, -mk)) : 0.0f;
  }
  s = row_sum<THREADS, 1>(s, scratch);
  const float inv = s > 0.0f ? 1.0f / s : 0.0f;
  for (int col = t * VEC; col < len; col += THREADS * VEC) {
    float f[VEC] = {};
    if (col < n) {
      Packed<T, VEC> p;
      p.load(staged + col, VEC, true);
      p.unpack(f);
    }
    float out[VEC];
#pragma unroll
    for (int i = 0; i < VEC; ++i) out[i] = col + i < n ? fast_exp2(fmaf(f[i], k, -mk)) * inv : 0.0f;
    const int limit = len - col;
    store_some<T, VEC>(yr + col, limit, vec && limit >= VEC, out);
  }
}

// SPLIT > 1, first launch: grid (SPLIT, rows); block (s, r) reduces columns [s * seg, (s + 1) *
// seg) of row r (seg a multiple of VEC) to its running (max, sum of exp2(t - max)) in base-2 units
// and writes them to partials[(r * SPLIT + s) * 2 + {0, 1}] (max -inf and sum 0 for an empty span).
// At least 1024 threads an SM resident (<= 64 registers a thread): the streaming loop needs many
// loads in flight, and ptxas otherwise spends up to 95 registers on it (f16, THREADS 256).
template <int THREADS, int VEC, int MASK, typename T>
__global__ void __launch_bounds__(THREADS, 1024 / THREADS)
    ktune_softmax_partial(const T* __restrict__ x, float* __restrict__ partials,
                          const int* __restrict__ lengths, int rows, int cols, float scale, int row_offset,
                          int seg) {
  using namespace ktune_ops;
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS a multiple of 32, at most 1024");
  constexpr int kBytes = VEC * static_cast<int>(sizeof(T));
  constexpr float kLog2e = 1.4426950408889634f;
  __shared__ float scratch[THREADS / 32];
  const int row = static_cast<int>(blockIdx.y);
  const int split = static_cast<int>(gridDim.x);
  const int begin = static_cast<int>(blockIdx.x) * seg;
  const int t = static_cast<int>(threadIdx.x);
  const T* xr = x + static_cast<size_t>(row) * static_cast<size_t>(cols);
  const bool vec = aligned_to(xr, kBytes);
  const int n = ktune_softmax_detail::valid_prefix<MASK>(row, rows, cols, lengths, row_offset);
  float m = neg_inf();
  float s = 0.0f;
  ktune_softmax_detail::online_span<THREADS, VEC, T>(xr, begin, min(begin + seg, cols), n, vec,
                                                     scale * kLog2e, t, m, s);
  const float big = row_max<THREADS, 1>(m, scratch);
  s = row_sum<THREADS, 1>(m == neg_inf() ? 0.0f : s * fast_exp2(m - big), scratch);
  if (t == 0) {
    partials[(static_cast<size_t>(row) * split + blockIdx.x) * 2] = big;
    partials[(static_cast<size_t>(row) * split + blockIdx.x) * 2 + 1] = s;
  }
}

// SPLIT > 1, second launch: grid (SPLIT, rows); every thread combines the row's SPLIT partials
// (max M = max m_i, sum S = sum s_i exp2(m_i - M)), then block (s, r) writes its columns of y
// (reading x again, mostly from L2: the first launch read it just before).
template <int THREADS, int VEC, int MASK, typename T>
__global__ void __launch_bounds__(THREADS, 1024 / THREADS)
    ktune_softmax_split_finish(const T* __restrict__ x, const float* __restrict__ partials, T* __restrict__ y,
                               const int* __restrict__ lengths, int rows, int cols, float scale,
                               int row_offset, int seg) {
  using namespace ktune_ops;
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS a multiple of 32, at most 1024");
  constexpr int kBytes = VEC * static_cast<int>(sizeof(T));
  constexpr float kLog2e = 1.4426950408889634f;
  const int row = static_cast<int>(blockIdx.y);
  const int split = static_cast<int>(gridDim.x);
  const int begin = static_cast<int>(blockIdx.x) * seg;
  const int end = min(begin + seg, cols);
  const int t = static_cast<int>(threadIdx.x);
  const size_t base = static_cast<size_t>(row) * static_cast<size_t>(cols);
  const T* xr = x + base;
  T* yr = y + base;
  const bool vec = aligned_to(xr, kBytes) && aligned_to(yr, kBytes);
  const int n = ktune_softmax_detail::valid_prefix<MASK>(row, rows, cols, lengths, row_offset);
  const float* pr = partials + static_cast<size_t>(row) * split * 2;
  float big = neg_inf();
  for (int i = 0; i < split; ++i) big = fmaxf(big, pr[2 * i]);
  if (big == neg_inf()) big = 0.0f;  // no unmasked column in the row
  float s = 0.0f;
  for (int i = 0; i < split; ++i)
    s += pr[2 * i] == neg_inf() ? 0.0f : pr[2 * i + 1] * fast_exp2(pr[2 * i] - big);
  const float inv = s > 0.0f ? 1.0f / s : 0.0f;
  const float k = scale * kLog2e;
  for (int b = begin + t * VEC; b < end; b += ktune_softmax_detail::kUnroll * THREADS * VEC) {
    float v[ktune_softmax_detail::kUnroll][VEC];
#pragma unroll
    for (int u = 0; u < ktune_softmax_detail::kUnroll; ++u) {
      const int col = b + u * THREADS * VEC;
      const int limit = min(n, end) - col;
      load_some<T, VEC, true>(xr + col, limit, vec && limit >= VEC, 0.0f, v[u]);  // the last read
    }
#pragma unroll
    for (int u = 0; u < ktune_softmax_detail::kUnroll; ++u) {
      const int col = b + u * THREADS * VEC;
      if (col < end) {
        float out[VEC];
#pragma unroll
        for (int i = 0; i < VEC; ++i) out[i] = col + i < n ? fast_exp2(fmaf(v[u][i], k, -big)) * inv : 0.0f;
        const int limit = end - col;
        store_some<T, VEC>(yr + col, limit, vec && limit >= VEC, out);
      }
    }
  }
}
