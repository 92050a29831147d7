#include "harness/tolerance.hpp"

#include <array>

namespace ktune::harness {

namespace {
// u = unit roundoff of the output type (2^-(mantissa bits + 1)). Outputs are rounded once to the
// output type, which alone gives a relative RMS error of about u/sqrt(3); reordered fp32
// accumulation adds ~sqrt(K)*2^-24 (K = reduction length). Each bound leaves >= 4x headroom over
// the larger of the two at K = 16384, and stays well under the error of a genuinely wrong result
// (a wrong tile or a missed K-slice gives rel_l2 >= ~1e-1 with random inputs in +-[0.25, 1)).
constexpr std::array<Tolerance, 5> kTable{{
    {DType::kF32, 1e-4, 1e-3,
     "u=2^-24; fp32 accumulation in another order gives ~sqrt(K)*u = 7.6e-6 at K=16384; 13x headroom. "
     "Max element: a single-element error of 1e-3*max|ref| is a real bug, not rounding"},
    {DType::kF16, 2e-3, 1e-2,
     "u=2^-11=4.9e-4; output rounding gives RMS ~2.8e-4, fp32 accumulation adds <1e-5; 7x headroom. "
     "Max element: 1e-2 = ~20 u of the largest value (one rounding of the output plus accumulation)"},
    {DType::kBF16, 1.6e-2, 6.25e-2,
     "u=2^-8=3.9e-3; output rounding gives RMS ~2.3e-3; 7x headroom. Max element: 2^-4 = 16 u"},
    {DType::kFP8E4M3, 1e-1, 2.5e-1,
     "u=2^-4=6.25e-2; output rounding gives RMS ~3.6e-2; 2.8x headroom. Max element: 4 u"},
    {DType::kFP8E5M2, 2e-1, 5e-1,
     "u=2^-3=0.125; output rounding gives RMS ~7.2e-2; 2.8x headroom. Max element: 4 u"},
}};
}  // namespace

std::span<const Tolerance> tolerance_table() { return kTable; }

const Tolerance& tolerance_for(DType dtype) {
  for (const Tolerance& t : kTable) {
    if (t.dtype == dtype) return t;
  }
  return kTable[0];  // unreachable: the table has one row per DType (a unit test checks it)
}

}  // namespace ktune::harness
