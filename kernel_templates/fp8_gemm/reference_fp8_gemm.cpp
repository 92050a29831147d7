#include "kernel_templates/fp8_gemm/reference_fp8_gemm.hpp"

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::kernel_templates {

std::vector<double> fp8_gemm_reference_f64(std::span<const double> a, std::span<const double> b,
                                           std::span<const double> a_scale, std::span<const double> b_scale,
                                           int64_t m, int64_t n, int64_t k, bool rowcol) {
  if (m < 1 || n < 1 || k < 1) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("fp8_gemm reference: dimensions must be positive (m={}, n={}, k={})", m, n, k));
  }
  const auto want_a = static_cast<std::size_t>(rowcol ? m : 1);
  const auto want_b = static_cast<std::size_t>(rowcol ? n : 1);
  if (a.size() != static_cast<std::size_t>(m * k) || b.size() != static_cast<std::size_t>(n * k) ||
      a_scale.size() != want_a || b_scale.size() != want_b) {
    throw Error(
        ErrorKind::kBadInput,
        fmt::format("fp8_gemm reference: got A {}, B {}, a_scale {}, b_scale {} values; expected {}, {}, "
                    "{}, {}",
                    a.size(), b.size(), a_scale.size(), b_scale.size(), m * k, n * k, want_a, want_b));
  }
  std::vector<double> c(static_cast<std::size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        s += a[static_cast<std::size_t>(i * k + p)] * b[static_cast<std::size_t>(j * k + p)];
      }
      double v = s * a_scale[rowcol ? static_cast<std::size_t>(i) : 0] *
                 b_scale[rowcol ? static_cast<std::size_t>(j) : 0];
      if (v > kBf16MaxFinite) v = kBf16MaxFinite;
      if (v < -kBf16MaxFinite) v = -kBf16MaxFinite;
      c[static_cast<std::size_t>(i * n + j)] = v;
    }
  }
  return c;
}

}  // namespace ktune::kernel_templates
