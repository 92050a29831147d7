// swiglu: out[r, j] = silu(gate[r, j]) * up[r, j], silu(g) = g / (1 + exp(-g)), f32, one rounding
// to T. SPLIT false (mode "fused"): one input x [rows, 2 * inter], gate = x[r, 0:inter] (first
// half), up = x[r, inter:2 * inter] (second half), the vLLM silu_and_mul layout; `b` is unused.
// SPLIT true (mode "split"): gate = a [rows, inter], up = b [rows, inter]. out is [rows, inter].
//
// Grid (ceil(inter / (THREADS * VEC * ITEMS)), rows). Thread t of block x handles ITEMS vectors of
// VEC elements at columns ((x * ITEMS + i) * THREADS + t) * VEC, all loads issued before any math
// (2 * ITEMS * VEC * sizeof(T) bytes in flight a thread). Vector path when the row's gate, up and
// out are aligned to VEC * sizeof(T) (fused: inter % VEC == 0 too); otherwise per element.
#include "ops_reduce.cuh"

template <int THREADS, int VEC, int ITEMS, bool SPLIT, typename T>
__global__ void __launch_bounds__(THREADS)
    ktune_swiglu(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, int rows, int inter) {
  using namespace ktune_ops;
  constexpr int kBytes = VEC * static_cast<int>(sizeof(T));
  const int row = static_cast<int>(blockIdx.y);
  const size_t in_stride = SPLIT ? static_cast<size_t>(inter) : 2 * static_cast<size_t>(inter);
  const T* g = a + row * in_stride;
  const T* u = SPLIT ? b + row * in_stride : g + inter;
  T* o = out + static_cast<size_t>(row) * inter;
  const bool vec = aligned_to(g, kBytes) && aligned_to(u, kBytes) && aligned_to(o, kBytes);
  const int first = static_cast<int>(blockIdx.x) * ITEMS * THREADS;
  const int len = row < rows ? inter : 0;

  // Kept packed as loaded until the math: half the registers of f32 for 16-bit types (ITEMS 4 x
  // 16-byte vectors took 85 registers as f32).
  Packed<T, VEC> gv[ITEMS];
  Packed<T, VEC> uv[ITEMS];
#pragma unroll
  for (int it = 0; it < ITEMS; ++it) {
    const int col = ((first + it * THREADS) + static_cast<int>(threadIdx.x)) * VEC;
    const int limit = len - col;
    // gate and up are read once: evict-first, so they do not push out of L2 what is still wanted.
    gv[it].template load<true>(g + col, limit, vec && limit >= VEC);
    uv[it].template load<true>(u + col, limit, vec && limit >= VEC);
  }
#pragma unroll
  for (int it = 0; it < ITEMS; ++it) {
    const int col = ((first + it * THREADS) + static_cast<int>(threadIdx.x)) * VEC;
    const int limit = len - col;
    float gf[VEC];
    float uf[VEC];
    gv[it].unpack(gf);
    uv[it].unpack(uf);
    float r[VEC];
#pragma unroll
    for (int i = 0; i < VEC; ++i) r[i] = gf[i] / (1.0f + __expf(-gf[i])) * uf[i];
    store_some<T, VEC>(o + col, limit, vec && limit >= VEC, r);
  }
}
