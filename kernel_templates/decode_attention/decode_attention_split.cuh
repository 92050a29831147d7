// What every decode_attention template shares once its keys are read: the online-softmax merge
// of two partial states, a block's last step (its warps' partial states merged, then o written or
// the split's partial stored to the workspace) and the combine kernel that merges the splits.
//
// Partial state of one (sequence, query head) row over some keys, base 2: max m (-inf when no key
// was seen), sum l of 2^(s - m) and the un-normalised accumulator acc[D] = sum 2^(s - m) v.
// Workspace (SPLIT_K > 1): acc [batch * heads_q, num_splits, D] then (m, l) [batch * heads_q,
// num_splits, 2]; every entry is written (an empty split writes m = -inf, l = 0, acc = 0).
#pragma once

#include "ops_reduce.cuh"

namespace ktune_attn {

/// Merges online-softmax state (m2, l2, a2) into (m, l, a): base 2, m may be -infinity (empty).
template <int N>
__device__ __forceinline__ void merge_state(float& m, float& l, float* a, float m2, float l2,
                                            const float* a2) {
  const float big = fmaxf(m, m2);
  const float safe = big == ktune_ops::neg_inf() ? 0.0f : big;
  const float x = exp2f(m - safe);
  const float y = exp2f(m2 - safe);
  l = l * x + l2 * y;
#pragma unroll
  for (int i = 0; i < N; ++i) a[i] = a[i] * x + a2[i] * y;
  m = big;
}

/// Merges the WARPS partial states of head g (red_acc [WARPS][G][D], red_m and red_l [WARPS][G] in
/// shared memory) at element d: the largest max `big`, the sum and the accumulator, both scaled to
/// `big` (0 when `big` is -infinity: no key was seen).
template <int D, int G, int WARPS>
__device__ __forceinline__ void merge_warps(const float (*red_acc)[G][D], const float (*red_m)[G],
                                            const float (*red_l)[G], int g, int d, float& big, float& sum,
                                            float& a) {
  big = red_m[0][g];
#pragma unroll
  for (int w = 1; w < WARPS; ++w) big = fmaxf(big, red_m[w][g]);
  const float safe = big == ktune_ops::neg_inf() ? 0.0f : big;
  sum = 0.0f;
  a = 0.0f;
#pragma unroll
  for (int w = 0; w < WARPS; ++w) {
    const float x = exp2f(red_m[w][g] - safe);
    sum += red_l[w][g] * x;
    a += red_acc[w][g][d] * x;
  }
}

/// The block's last step, after a __syncthreads: the WARPS partial states of its G heads merged
/// (merge_warps), a thread an output element (g, d); then o written (num_splits 1) or split
/// `split`'s partial stored to the workspace.
template <int D, int G, int WARPS, typename T>
__device__ __forceinline__ void finish_block(const float (*red_acc)[G][D], const float (*red_m)[G],
                                             const float (*red_l)[G], T* o, float* workspace, int b,
                                             int h0, int heads_q, int split, int num_splits) {
  const size_t rows = static_cast<size_t>(gridDim.z) * heads_q;
  for (int idx = static_cast<int>(threadIdx.x); idx < G * D; idx += WARPS * 32) {
    const int g = idx / D;
    const int d = idx % D;
    float big, sum, a;
    merge_warps<D, G, WARPS>(red_acc, red_m, red_l, g, d, big, sum, a);
    const size_t row = static_cast<size_t>(b) * heads_q + h0 + g;
    if (num_splits == 1) {
      o[row * D + d] = ktune_dev::from_f32<T>(sum > 0.0f ? a / sum : 0.0f);
    } else {
      const size_t entry = row * num_splits + split;
      workspace[entry * D + d] = a;
      if (d == 0) {
        float* ml = workspace + rows * num_splits * D;
        ml[entry * 2] = big;
        ml[entry * 2 + 1] = sum;
      }
    }
  }
}

}  // namespace ktune_attn

/// Merges the num_splits partial results of each (sequence, query head) row: a warp a row, 4 rows
/// a block of 128 threads, a lane D / 32 elements.
template <int D, typename T>
__global__ void __launch_bounds__(128)
    ktune_decode_attention_combine(const float* __restrict__ workspace, T* __restrict__ o, int rows,
                                   int num_splits) {
  constexpr int kPer = D / 32;
  static_assert(D % 32 == 0, "D a multiple of 32");
  const int row = static_cast<int>(blockIdx.x) * 4 + static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  if (row >= rows) return;
  const float* acc = workspace + static_cast<size_t>(row) * num_splits * D + lane * kPer;
  const float* ml =
      workspace + static_cast<size_t>(rows) * num_splits * D + static_cast<size_t>(row) * num_splits * 2;
  float big = ktune_ops::neg_inf();
  for (int s = 0; s < num_splits; ++s) big = fmaxf(big, ml[2 * s]);
  const float safe = big == ktune_ops::neg_inf() ? 0.0f : big;
  float sum = 0.0f;
  float a[kPer];
#pragma unroll
  for (int i = 0; i < kPer; ++i) a[i] = 0.0f;
  for (int s = 0; s < num_splits; ++s) {
    const float x = exp2f(ml[2 * s] - safe);
    sum += ml[2 * s + 1] * x;
#pragma unroll
    for (int i = 0; i < kPer; ++i) a[i] += acc[static_cast<size_t>(s) * D + i] * x;
  }
  const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
  T* out = o + static_cast<size_t>(row) * D + lane * kPer;
#pragma unroll
  for (int i = 0; i < kPer; ++i) out[i] = ktune_dev::from_f32<T>(a[i] * inv);
}
