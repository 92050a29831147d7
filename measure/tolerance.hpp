#pragma once
/// The per-dtype tolerances every candidate is judged by (docs/design.md D4). ONE table, in
/// tolerance.cpp, with the reason for each number; docs/measurement.md repeats it.

#include <span>
#include <string_view>

#include "core/dtype.hpp"

namespace ktune::measure {

/// How far an output may be from its reference.
struct Tolerance {
  DType dtype;
  /// Bound on ||out - ref||_2 / ||ref||_2 over the whole output.
  double rel_l2;
  /// Bound on max_i |out_i - ref_i| / max_i |ref_i| (catches a few wrong elements that the
  /// norm of a large output would hide).
  double max_abs_rel;
  /// Absolute resolution floor: an output whose max_i |out_i - ref_i| is at most this passes
  /// whatever its relative errors. Derived from the format: 2 x (half the subnormal spacing), the
  /// most that rounding a result near the reference to the output type can cost where the type
  /// has no relative precision left (outputs below the smallest normal). 0 = no floor.
  double abs_floor;
  /// Why these numbers.
  std::string_view reason;
};

/// Every row, one per DType.
std::span<const Tolerance> tolerance_table();
/// The row for `dtype`.
const Tolerance& tolerance_for(DType dtype);

}  // namespace ktune::measure
