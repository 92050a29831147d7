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
#include "ops_reduce.cuh"

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
  auto load_t = [&](int col, float* v) {
    const int limit = n - col;
    load_some<T, VEC>(xr + col, limit, vec && limit >= VEC, 0.0f, v);
#pragma unroll
    for (int i = 0; i < VEC; ++i) v[i] = i < limit ? v[i] * k : neg_inf;
  };
  auto store_y = [&](int col, const float* v, float m, float inv) {
    const int limit = len - col;
    float out[VEC];
#pragma unroll
    for (int i = 0; i < VEC; ++i) out[i] = col + i < n ? exp2f(v[i] - m) * inv : 0.0f;
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
      v[c].load(xr + col, n - col, vec && n - col >= VEC);
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
      for (int i = 0; i < VEC; ++i) s += exp2f(f[i] - m);
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
#pragma unroll 2
    for (int col = t * VEC; col < n; col += THREADS * VEC) {
      float v[VEC];
      load_t(col, v);
      float vm = v[0];
#pragma unroll
      for (int i = 1; i < VEC; ++i) vm = fmaxf(vm, v[i]);
      const float m_new = fmaxf(m, vm);  // finite: v[0] is unmasked (col < n)
      float add = 0.0f;
#pragma unroll
      for (int i = 0; i < VEC; ++i) add += exp2f(v[i] - m_new);
      s = s * exp2f(m - m_new) + add;
      m = m_new;
    }
    float big = row_max<THREADS, ROWS>(m, scratch);
    if (big == neg_inf) big = 0.0f;
    s = row_sum<THREADS, ROWS>(m == neg_inf ? 0.0f : s * exp2f(m - big), scratch);
    const float inv = s > 0.0f ? 1.0f / s : 0.0f;
#pragma unroll 2
    for (int col = t * VEC; col < len; col += THREADS * VEC) {
      float v[VEC];
      load_t(col, v);
      store_y(col, v, big, inv);
    }
  }
}
