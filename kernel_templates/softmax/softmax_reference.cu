// softmax / reference: the GPU reference of every softmax candidate. Deliberately plain: one warp
// a row, three strided passes (max, sum, write), f32 in natural-base expf, f32 output y_ref. Same
// mask definitions as softmax.cu. Checked against the CPU float64 reference in the gpu tests.
#include "ops_reduce.cuh"

template <typename T, int MASK>
__global__ void __launch_bounds__(128)
    ktune_softmax_reference(const T* __restrict__ x, float* __restrict__ y_ref,
                            const int* __restrict__ lengths, int rows, int cols, float scale,
                            int row_offset) {
  using ktune_dev::to_f32;
  const int row = static_cast<int>(blockIdx.x) * 4 + static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const bool active = row < rows;  // inactive warps still take part in the shuffles
  int n = cols;
  if (MASK == 1) n = min(cols, max(0, row + row_offset + 1));
  if (MASK == 2)
    n = active ? static_cast<int>(static_cast<unsigned>(lengths[row]) % (static_cast<unsigned>(cols) + 1u))
               : 0;
  if (!active) n = 0;
  const size_t base = static_cast<size_t>(active ? row : 0) * static_cast<size_t>(cols);
  float m = ktune_ops::neg_inf();
  for (int c = lane; c < n; c += 32) m = fmaxf(m, to_f32<T>(x[base + c]) * scale);
  for (int off = 16; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  float s = 0.0f;
  for (int c = lane; c < n; c += 32) s += expf(to_f32<T>(x[base + c]) * scale - m);
  for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
  if (!active) return;
  for (int c = lane; c < cols; c += 32) {
    y_ref[base + c] = c < n ? expf(to_f32<T>(x[base + c]) * scale - m) / s : 0.0f;
  }
}
