#pragma once
/// Comparison of a candidate's output with its reference (docs/design.md D4): relative error
/// ||out - ref||_2 / ||ref||_2 and max abs error, judged against the dtype's row of the tolerance
/// table. The sums are kept as partials so the GPU compare kernel (gpu_compare.hpp) and the host
/// share one formula: each block produces an ErrorSums, the host merges them.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "measure/tolerance.hpp"

namespace ktune::measure {

/// Partial sums of a comparison; merge() is associative, so the order of blocks does not matter
/// beyond double rounding.
struct ErrorSums {
  double sum_sq_diff = 0;      ///< sum (out_i - ref_i)^2 over finite pairs
  double sum_sq_ref = 0;       ///< sum ref_i^2 over finite refs
  double max_abs_diff = 0;     ///< max |out_i - ref_i| over finite pairs
  double max_abs_ref = 0;      ///< max |ref_i| over finite refs
  uint64_t nonfinite_out = 0;  ///< outputs that are NaN or Inf (poison left unwritten shows here)
  uint64_t nonfinite_ref = 0;  ///< references that are NaN or Inf (a broken reference)
  uint64_t count = 0;

  /// Adds one element pair.
  void add(double out, double ref);
  /// Adds the partial sums of another range.
  void merge(const ErrorSums& other);
};

/// The comparison's result.
struct ErrorMetrics {
  double rel_err = 0;      ///< ||out-ref|| / ||ref||; 0 when both are 0; +inf when only ref is 0
  double max_abs_err = 0;  ///< max |out_i - ref_i|
  double max_abs_ref = 0;
  uint64_t nonfinite_out = 0;
  uint64_t nonfinite_ref = 0;
  uint64_t count = 0;
};

ErrorMetrics finish(const ErrorSums& sums);

/// Compares two equally long host arrays. Throws ktune::Error(kBadInput) when the lengths differ.
ErrorMetrics compare(std::span<const double> out, std::span<const double> ref);

/// Pass or fail with the reason.
struct Verdict {
  bool ok = false;
  std::string reason;  ///< "" when ok; otherwise the numbers and the bound they broke
  ErrorMetrics metrics;
};

/// Judges metrics against a tolerance: at least one element compared, no non-finite value on either
/// side, a reference that is not all zeros, and then either max_abs_err <= abs_floor (the output
/// type's resolution near zero) or both rel_err <= rel_l2 and
/// max_abs_err <= max_abs_rel * max_abs_ref.
Verdict judge(const ErrorMetrics& metrics, const Tolerance& tolerance);

/// Judges an output of `dtype` with a user kernel's bounds for it (docs/byo.md): `rel_l2` > 0
/// replaces the dtype's relative L2 bound (and raises its max-element bound to at least 10x it);
/// `abs` alone is the whole criterion (judge_absolute); `abs` beside `rel_l2` passes an output that
/// meets either. Neither: the dtype's tolerance.
Verdict judge(const ErrorMetrics& metrics, DType dtype, double rel_l2, std::optional<double> abs);

/// Judges by an absolute bound only: the same checks for an empty output, non-finite values and an
/// all-zero reference as judge(), then max_abs_err <= `bound` (0: exact, as integer outputs are
/// compared by default). `type` names the output type in the reason.
Verdict judge_absolute(const ErrorMetrics& metrics, double bound, std::string_view type);

}  // namespace ktune::measure
