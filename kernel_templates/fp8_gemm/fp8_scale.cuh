// The output scaling of the fp8_gemm kernels (fp8_gemm.cu, fp8_gemm_wgmma.cu): an f32 sum times
// the per-tensor scales (a_scale[0] * b_scale[0]) or the row's and column's (ROWCOL: a_scale[row] *
// b_scale[col]), applied as (acc * a) * b in f32, saturated to the largest finite bf16 instead of
// rounding to inf; NaN stays NaN.
#pragma once

namespace ktune_fp8 {

/// The largest finite bf16, 0x7F7F: (2 - 2^-7) * 2^127.
constexpr float kBf16Max = 0x1.fep127f;

/// The scaled, saturated output value of an f32 sum at (row, col).
template <bool ROWCOL>
__device__ __forceinline__ float scaled(float acc, const float* __restrict__ a_scale,
                                        const float* __restrict__ b_scale, int row, int col) {
  const float v = ROWCOL ? (acc * a_scale[row]) * b_scale[col] : (acc * a_scale[0]) * b_scale[0];
  // Comparisons are false for NaN, so NaN passes through; +-inf saturates too.
  return v > kBf16Max ? kBf16Max : (v < -kBf16Max ? -kBf16Max : v);
}

}  // namespace ktune_fp8
