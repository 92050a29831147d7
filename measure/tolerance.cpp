#include "measure/tolerance.hpp"

#include <array>

namespace ktune::measure {

namespace {
// u = unit roundoff of the output type (2^-(mantissa bits + 1)). Outputs are rounded once to the
// output type, which alone gives a relative RMS error of about u/sqrt(3); reordered fp32
// accumulation adds ~sqrt(K)*2^-24 (K = reduction length). Each bound leaves >= 4x headroom over
// the larger of the two at K = 16384, and stays well under the error of a genuinely wrong result
// (a wrong tile or a missed K-slice gives rel_l2 >= ~1e-1 with random inputs in +-[0.25, 1)).
//
// Absolute floor: below the smallest normal a type has fixed spacing s = 2^(emin - mantissa bits)
// and no relative precision (softmax over 262144 columns gives outputs ~3.8e-6, under f16's
// smallest normal 6.1e-5, where one f16 step is ~1.6% of the value). Correct rounding costs up to
// s/2; a kernel's f32 result a few f32 ulps from the reference can land on the other side of a
// rounding midpoint and round to the other neighbour (error s/2 + tiny). Over ~10^6 subnormal
// outputs that happens (~1e-5 per element), so the floor is kSubnormalFactor x s/2 = s: either
// neighbour of the exact value passes, an output two steps off fails.
constexpr double kSubnormalFactor = 2;  // x half spacing: either neighbour of the exact value

/// 2^-n for n >= 0, usable in a constant expression (std::ldexp is not constexpr in C++20).
constexpr double pow2_neg(int n) {
  double v = 1;
  for (int i = 0; i < n; ++i) v /= 2;
  return v;
}

/// kSubnormalFactor x half the subnormal spacing 2^(emin - mantissa_bits), with emin the exponent
/// of the smallest normal.
constexpr double subnormal_floor(int emin, int mantissa_bits) {
  return kSubnormalFactor * pow2_neg(mantissa_bits - emin) / 2;
}

constexpr std::array<Tolerance, 5> kTable{{
    {DType::kF32, 1e-4, 1e-3, 0,
     "u=2^-24; fp32 accumulation in another order gives ~sqrt(K)*u = 7.6e-6 at K=16384; 13x headroom. "
     "Max element: a single-element error of 1e-3*max|ref| is a real bug, not rounding. "
     "Abs floor 0: f32 outputs are not narrowed from a wider result, and its subnormal spacing 2^-149 "
     "is far below any output here"},
    {DType::kF16, 2e-3, 1e-2, subnormal_floor(-14, 10),
     "u=2^-11=4.9e-4; output rounding gives RMS ~2.8e-4, fp32 accumulation adds <1e-5; 7x headroom. "
     "Max element: 1e-2 = ~20 u of the largest value (one rounding of the output plus accumulation). "
     "Abs floor 2^-24 = 5.96e-8: subnormal spacing 2^-24, 2 x half of it (either neighbour of the "
     "exact value)"},
    {DType::kBF16, 1.6e-2, 6.25e-2, subnormal_floor(-126, 7),
     "u=2^-8=3.9e-3; output rounding gives RMS ~2.3e-3; 7x headroom. Max element: 2^-4 = 16 u. "
     "Abs floor 2^-133 (subnormal spacing, either neighbour): irrelevant in practice"},
    {DType::kFP8E4M3, 1e-1, 2.5e-1, subnormal_floor(-6, 3),
     "u=2^-4=6.25e-2; output rounding gives RMS ~3.6e-2; 2.8x headroom. Max element: 4 u. "
     "Abs floor 2^-9: subnormal spacing 2^-9, either neighbour of the exact value"},
    {DType::kFP8E5M2, 2e-1, 5e-1, subnormal_floor(-14, 2),
     "u=2^-3=0.125; output rounding gives RMS ~7.2e-2; 2.8x headroom. Max element: 4 u. "
     "Abs floor 2^-16: subnormal spacing 2^-16, either neighbour of the exact value"},
}};
static_assert(subnormal_floor(-14, 10) == 0x1p-24, "f16 subnormal spacing is 2^-24");
static_assert(subnormal_floor(-126, 7) == 0x1p-133, "bf16 subnormal spacing is 2^-133");
static_assert(subnormal_floor(-6, 3) == 0x1p-9, "fp8e4m3 subnormal spacing is 2^-9");
static_assert(subnormal_floor(-14, 2) == 0x1p-16, "fp8e5m2 subnormal spacing is 2^-16");
}  // namespace

std::span<const Tolerance> tolerance_table() { return kTable; }

const Tolerance& tolerance_for(DType dtype) {
  for (const Tolerance& t : kTable) {
    if (t.dtype == dtype) return t;
  }
  return kTable[0];  // unreachable: the table has one row per DType (a unit test checks it)
}

}  // namespace ktune::measure
