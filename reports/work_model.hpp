#pragma once
/// How much work a kernel does for one shape and dtype: the floating-point operations and the
/// minimum DRAM bytes (each input read once, each output written once). TFLOP/s, GB/s and the
/// roofline in reports are computed from it. The kernel specs will carry these numbers later;
/// until then this function knows the built-in kernels and is the one place to replace.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace ktune::reports {

/// A shape as (dimension name, value) pairs.
using Dims = std::span<const std::pair<std::string, int64_t>>;

/// The work of one launch; an absent field means "not known for this kernel".
struct Work {
  std::optional<double> flops;  ///< floating-point operations (a multiply-add counts 2)
  std::optional<double> bytes;  ///< minimum bytes moved to and from DRAM
};

/// Bytes per element of a dtype name ("f32" 4, "bf16" 2, "fp8e4m3" 1, ...); nullopt when unknown.
std::optional<double> dtype_bytes(std::string_view dtype);

/// Whether `dtype` is one of the 8-bit float formats (their GEMMs write bf16 results).
bool is_fp8(std::string_view dtype);

/// Work of `kernel` at `dims` in `dtype`:
///  - gemm, fp8_gemm: flops 2mnk, bytes (mk + nk)*elem + mn*out_elem (out_elem: 2 for fp8, else elem)
///  - copy:           bytes 2n*elem (n, or the product of all dimensions when there is no n)
///  - anything else, an unknown dtype or a missing dimension: empty.
Work work_model(std::string_view kernel, Dims dims, std::string_view dtype);

}  // namespace ktune::reports
