#pragma once
/// The CPU float64 reference of the gemm family (D4): plain loops, no blocking, exact enough to judge
/// the GPU reference. Unit-tested against hand-worked cases.

#include <cstdint>
#include <span>
#include <vector>

namespace ktune::kernel_templates {

/// Layout of B in C[M,N] = A[M,K] * B.
enum class GemmLayout {
  kNT,  ///< B is [N,K] row-major (the nn.Linear weight layout): C = A * B^T
  kNN,  ///< B is [K,N] row-major: C = A * B
};

/// C[m][n] = sum over k of A[m][k] * B(k, n), accumulated in double in k order. A is [M,K]
/// row-major; B as `layout` says. Throws ktune::Error(kBadInput) when a span's size does not match.
std::vector<double> gemm_reference_f64(std::span<const double> a, std::span<const double> b, int64_t m,
                                       int64_t n, int64_t k, GemmLayout layout);

/// The same sum over the K range [k_begin, k_end) only: one split of a split-K GEMM. Summing the
/// splits of a partition of [0, K) gives gemm_reference_f64 (up to double rounding).
std::vector<double> gemm_reference_f64_range(std::span<const double> a, std::span<const double> b, int64_t m,
                                             int64_t n, int64_t k, GemmLayout layout, int64_t k_begin,
                                             int64_t k_end);

}  // namespace ktune::kernel_templates
