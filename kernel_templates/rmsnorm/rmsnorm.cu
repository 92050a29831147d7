// rmsnorm: y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * w, f32 accumulation, T in and out.
// RESIDUAL: s = T(x + residual) is the normalised row; s is also written to residual_out (which may
// be the residual buffer itself: each element is read before the same thread writes it), and
// y = rmsnorm(s), so y is exactly the norm of what residual_out holds.
//
// A block holds ROWS row groups of THREADS threads (a multiple of 32); group g normalises row
// blockIdx.x * ROWS + g. Thread t of a group owns the vectors at columns (c * THREADS + t) * VEC,
// c = 0, 1, ...: consecutive threads read consecutive VEC-element vectors (coalesced).
// CHUNKS > 0: the row stays in registers (CHUNKS vectors a thread; the spec derives CHUNKS =
// ceil(hidden / (THREADS * VEC)) from the shape), one read of x. CHUNKS == 0: any hidden, x is read
// twice (the second read mostly hits L1/L2).
//
// Vector path per row when every row pointer is aligned to VEC * sizeof(T); a vector past the end
// of the row and misaligned rows (hidden % VEC != 0 misaligns every other row) take the
// per-element path: correct for every hidden and alignment.
#include "ops_reduce.cuh"

template <int THREADS, int ROWS, int VEC, int CHUNKS, bool RESIDUAL, typename T>
__global__ void __launch_bounds__(THREADS* ROWS)
    ktune_rmsnorm(const T* __restrict__ x, const T* residual, const T* __restrict__ w, T* __restrict__ y,
                  T* residual_out, int rows, int hidden, float eps) {
  using namespace ktune_ops;
  using ktune_dev::from_f32;
  using ktune_dev::to_f32;
  static_assert(THREADS % 32 == 0 && THREADS * ROWS <= 1024, "THREADS a multiple of 32, block <= 1024");
  constexpr int kBytes = VEC * static_cast<int>(sizeof(T));
  __shared__ float scratch[ROWS * THREADS / 32];

  const int group = static_cast<int>(threadIdx.x) / THREADS;
  const int t = static_cast<int>(threadIdx.x) % THREADS;
  const int row = static_cast<int>(blockIdx.x) * ROWS + group;
  const bool active = row < rows;
  const size_t base = static_cast<size_t>(active ? row : 0) * static_cast<size_t>(hidden);
  const T* xr = x + base;
  const T* rr = RESIDUAL ? residual + base : nullptr;
  T* ro = RESIDUAL ? residual_out + base : nullptr;
  T* yr = y + base;
  bool vec = aligned_to(xr, kBytes) && aligned_to(w, kBytes) && aligned_to(yr, kBytes);
  if (RESIDUAL) vec = vec && aligned_to(rr, kBytes) && aligned_to(ro, kBytes);
  const int len = active ? hidden : 0;

  // Loads the vector at `col` (x, or the rounded x + residual, also stored to residual_out).
  auto load_row = [&](int col, float* v) {
    const int limit = len - col;
    const bool full = vec && limit >= VEC;
    load_some<T, VEC>(xr + col, limit, full, 0.0f, v);
    if (RESIDUAL) {
      float r[VEC];
      load_some<T, VEC>(rr + col, limit, full, 0.0f, r);
#pragma unroll
      for (int i = 0; i < VEC; ++i) v[i] = to_f32<T>(from_f32<T>(v[i] + r[i]));
      store_some<T, VEC>(ro + col, limit, full, v);
    }
  };
  // Stores y at `col`; the weights come from `weights` when loaded ahead, else are loaded here.
  auto store_row = [&](int col, const float* v, float inv, const Packed<T, VEC>* weights) {
    const int limit = len - col;
    const bool full = vec && limit >= VEC;
    float wv[VEC];
    if (weights != nullptr) {
      weights->unpack(wv);
    } else {
      load_some<T, VEC>(w + col, limit, full, 0.0f, wv);
    }
    float out[VEC];
#pragma unroll
    for (int i = 0; i < VEC; ++i) out[i] = v[i] * inv * wv[i];
    store_some<T, VEC>(yr + col, limit, full, out);
  };

  float ss = 0.0f;
  if (CHUNKS > 0) {
    // The row stays in registers packed as T: x, or T(x + residual), is exactly what is kept.
    constexpr int kChunks = CHUNKS > 0 ? CHUNKS : 1;
    // Short rows are latency-bound: with at most 2 vectors a thread the weights are loaded with x,
    // before the reduction, instead of after it (one memory round trip fewer on the critical path).
    constexpr bool kWeightsAhead = kChunks <= 2;
    // Up to 8 vectors a thread the weights are all loaded before the first store (after the
    // reduction when not ahead); longer rows load them chunk by chunk (registers).
    constexpr bool kWeightsHeld = kChunks <= 8;
    Packed<T, VEC> v[kChunks];
    Packed<T, VEC> wv[kWeightsHeld ? kChunks : 1];
    // The residual's vectors are held too up to 8 a thread (registers), loaded in turn past that.
    constexpr bool kResidualHeld = RESIDUAL && kChunks <= 8;
    Packed<T, VEC> res[kResidualHeld ? kChunks : 1];
    // Every load of the row issued before any use: each load sits behind its own alignment branch,
    // so a use between two of them would make every chunk wait for the previous one's round trip.
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int col = (c * THREADS + t) * VEC;
      const int limit = len - col;
      const bool full = vec && limit >= VEC;
      v[c].template load<true>(xr + col, limit, full);  // x is read once: evict-first
      if (kWeightsAhead) wv[kWeightsHeld ? c : 0].load(w + col, limit, full);
      if (kResidualHeld) res[kResidualHeld ? c : 0].template load<true>(rr + col, limit, full);
    }
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      float f[VEC];
      v[c].unpack(f);
      if (RESIDUAL) {
        const int col = (c * THREADS + t) * VEC;
        const int limit = len - col;
        if (!kResidualHeld) res[0].template load<true>(rr + col, limit, vec && limit >= VEC);
        float g[VEC];
        res[kResidualHeld ? c : 0].unpack(g);
#pragma unroll
        for (int i = 0; i < VEC; ++i) f[i] += g[i];
        v[c].pack(f);
        v[c].unpack(f);
        v[c].store(ro + col, limit, vec && limit >= VEC);
      }
#pragma unroll
      for (int i = 0; i < VEC; ++i) ss = fmaf(f[i], f[i], ss);
    }
    if (kWeightsHeld && !kWeightsAhead) {
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        const int col = (c * THREADS + t) * VEC;
        wv[kWeightsHeld ? c : 0].load(w + col, len - col, vec && len - col >= VEC);
      }
    }
    ss = row_sum<THREADS, ROWS>(ss, scratch);
    const float inv = rsqrtf(ss / static_cast<float>(hidden) + eps);
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      float f[VEC];
      v[c].refresh();
      v[c].unpack(f);
      store_row((c * THREADS + t) * VEC, f, inv, kWeightsHeld ? &wv[kWeightsHeld ? c : 0] : nullptr);
    }
  } else {
#pragma unroll 2
    for (int col = t * VEC; col < len; col += THREADS * VEC) {
      float v[VEC];
      load_row(col, v);
#pragma unroll
      for (int i = 0; i < VEC; ++i) ss = fmaf(v[i], v[i], ss);
    }
    ss = row_sum<THREADS, ROWS>(ss, scratch);
    const float inv = rsqrtf(ss / static_cast<float>(hidden) + eps);
    const T* src = RESIDUAL ? static_cast<const T*>(ro) : xr;
#pragma unroll 2
    for (int col = t * VEC; col < len; col += THREADS * VEC) {
      const int limit = len - col;
      float v[VEC];
      load_some<T, VEC, true>(src + col, limit, vec && limit >= VEC, 0.0f, v);  // the last read: evict-first
      store_row(col, v, inv, nullptr);
    }
  }
}
