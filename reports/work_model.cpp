#include "reports/work_model.hpp"

#include <array>

namespace ktune::reports {
namespace {

std::optional<double> dim(Dims dims, std::string_view name) {
  for (const auto& [key, value] : dims) {
    if (key == name) return static_cast<double>(value);
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> dtype_bytes(std::string_view dtype) {
  struct Size {
    std::string_view name;
    double bytes;
  };
  static constexpr std::array<Size, 14> kSizes{{{"f64", 8},
                                                {"f32", 4},
                                                {"tf32", 4},
                                                {"f16", 2},
                                                {"bf16", 2},
                                                {"fp8e4m3", 1},
                                                {"fp8e5m2", 1},
                                                {"fp8", 1},
                                                {"i64", 8},
                                                {"i32", 4},
                                                {"i16", 2},
                                                {"i8", 1},
                                                {"u8", 1},
                                                {"fp4", 0.5}}};
  for (const Size& s : kSizes) {
    if (s.name == dtype) return s.bytes;
  }
  return std::nullopt;
}

bool is_fp8(std::string_view dtype) { return dtype.starts_with("fp8"); }

Work work_model(std::string_view kernel, Dims dims, std::string_view dtype) {
  Work work;
  const std::optional<double> elem = dtype_bytes(dtype);
  if (!elem) return work;
  if (kernel == "gemm" || kernel == "fp8_gemm") {
    const auto m = dim(dims, "m");
    const auto n = dim(dims, "n");
    const auto k = dim(dims, "k");
    if (!m || !n || !k) return work;
    const double out_elem = is_fp8(dtype) ? 2.0 : *elem;
    work.flops = 2.0 * *m * *n * *k;
    work.bytes = (*m * *k + *n * *k) * *elem + *m * *n * out_elem;
  } else if (kernel == "copy") {
    std::optional<double> n = dim(dims, "n");
    if (!n && !dims.empty()) {
      double product = 1;
      for (const auto& d : dims) product *= static_cast<double>(d.second);
      n = product;
    }
    if (n) work.bytes = 2.0 * *n * *elem;
  }
  return work;
}

}  // namespace ktune::reports
