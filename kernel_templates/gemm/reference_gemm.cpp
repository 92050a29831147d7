#include "kernel_templates/gemm/reference_gemm.hpp"

#include <string>

#include "ktune/error.hpp"

namespace ktune::kernel_templates {

std::vector<double> gemm_reference_f64(std::span<const double> a, std::span<const double> b, int64_t m,
                                       int64_t n, int64_t k, GemmLayout layout) {
  return gemm_reference_f64_range(a, b, m, n, k, layout, 0, k);
}

std::vector<double> gemm_reference_f64_range(std::span<const double> a, std::span<const double> b, int64_t m,
                                             int64_t n, int64_t k, GemmLayout layout, int64_t k_begin,
                                             int64_t k_end) {
  if (m < 1 || n < 1 || k < 1) {
    throw Error(ErrorKind::kBadInput, "gemm reference: dimensions must be positive (m=" + std::to_string(m) +
                                          ", n=" + std::to_string(n) + ", k=" + std::to_string(k) + ")");
  }
  if (static_cast<int64_t>(a.size()) != m * k || static_cast<int64_t>(b.size()) != k * n) {
    throw Error(ErrorKind::kBadInput, "gemm reference: A has " + std::to_string(a.size()) +
                                          " values, B has " + std::to_string(b.size()) + "; expected " +
                                          std::to_string(m * k) + " and " + std::to_string(k * n));
  }
  if (k_begin < 0 || k_end > k || k_begin > k_end) {
    throw Error(ErrorKind::kBadInput, "gemm reference: bad K range [" + std::to_string(k_begin) + ", " +
                                          std::to_string(k_end) + ") for k=" + std::to_string(k));
  }
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (int64_t p = k_begin; p < k_end; ++p) {
        const double bv = layout == GemmLayout::kNT ? b[static_cast<std::size_t>(j * k + p)]
                                                    : b[static_cast<std::size_t>(p * n + j)];
        s += a[static_cast<std::size_t>(i * k + p)] * bv;
      }
      c[static_cast<std::size_t>(i * n + j)] = s;
    }
  }
  return c;
}

}  // namespace ktune::kernel_templates
