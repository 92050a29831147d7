#pragma once
/// The CPU float64 reference of fp8_gemm (D4): plain loops over already decoded e4m3 values
/// (harness::decode_fp8e4m3), the scales applied as the kernel does, the result saturated to the
/// largest finite bf16. Unit-tested against hand-worked cases.

#include <cstdint>
#include <span>
#include <vector>

namespace ktune::kernel_templates {

/// The largest finite bf16, 0x7F7F = (2 - 2^-7) * 2^127: fp8_gemm's outputs saturate to +-this.
inline constexpr double kBf16MaxFinite = 0x1.fep127;

/// C[m][n] = sat((sum over k of A[m][k] * B[n][k]) * sa(m) * sb(n)), accumulated in double in k
/// order; A is [M,K] and B [N,K] row-major ("nt"); sa(m) = a_scale[rowcol ? m : 0], sb(n) =
/// b_scale[rowcol ? n : 0]; sat clamps to +-kBf16MaxFinite (NaN stays NaN). Throws
/// ktune::Error(kBadInput) when a dimension is not positive or a span's size does not match.
std::vector<double> fp8_gemm_reference_f64(std::span<const double> a, std::span<const double> b,
                                           std::span<const double> a_scale, std::span<const double> b_scale,
                                           int64_t m, int64_t n, int64_t k, bool rowcol);

}  // namespace ktune::kernel_templates
