#include "measure/verification.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::measure {

void ErrorSums::add(double out, double ref) {
  ++count;
  const bool out_ok = std::isfinite(out);
  const bool ref_ok = std::isfinite(ref);
  if (!out_ok) ++nonfinite_out;
  if (!ref_ok) ++nonfinite_ref;
  if (ref_ok) {
    sum_sq_ref += ref * ref;
    max_abs_ref = std::max(max_abs_ref, std::abs(ref));
  }
  if (out_ok && ref_ok) {
    const double d = out - ref;
    sum_sq_diff += d * d;
    max_abs_diff = std::max(max_abs_diff, std::abs(d));
  }
}

void ErrorSums::merge(const ErrorSums& other) {
  sum_sq_diff += other.sum_sq_diff;
  sum_sq_ref += other.sum_sq_ref;
  max_abs_diff = std::max(max_abs_diff, other.max_abs_diff);
  max_abs_ref = std::max(max_abs_ref, other.max_abs_ref);
  nonfinite_out += other.nonfinite_out;
  nonfinite_ref += other.nonfinite_ref;
  count += other.count;
}

ErrorMetrics finish(const ErrorSums& sums) {
  ErrorMetrics m;
  const double diff = std::sqrt(sums.sum_sq_diff);
  const double ref = std::sqrt(sums.sum_sq_ref);
  if (ref > 0) {
    m.rel_err = diff / ref;
  } else {
    m.rel_err = diff > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  }
  m.max_abs_err = sums.max_abs_diff;
  m.max_abs_ref = sums.max_abs_ref;
  m.nonfinite_out = sums.nonfinite_out;
  m.nonfinite_ref = sums.nonfinite_ref;
  m.count = sums.count;
  return m;
}

ErrorMetrics compare(std::span<const double> out, std::span<const double> ref) {
  if (out.size() != ref.size()) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("compare: output has {} elements, reference {}", out.size(), ref.size()));
  }
  ErrorSums sums;
  for (std::size_t i = 0; i < out.size(); ++i) sums.add(out[i], ref[i]);
  return finish(sums);
}

namespace {

/// Why the comparison cannot pass whatever the bounds, or "".
std::string unjudgeable(const ErrorMetrics& m) {
  if (m.count == 0) return "nothing compared (empty output)";
  if (m.nonfinite_ref > 0)
    return fmt::format("reference has {} non-finite values of {} (broken reference)", m.nonfinite_ref,
                       m.count);
  if (m.nonfinite_out > 0)
    return fmt::format("{} of {} outputs are NaN/Inf (unwritten poison or overflow)", m.nonfinite_out,
                       m.count);
  // Inputs are never all zeros, so an all-zero reference means the reference (or the input fill)
  // did not run; passing would let any output through.
  if (m.max_abs_ref == 0)
    return fmt::format("reference is all zeros ({} elements): nothing to verify against", m.count);
  return "";
}

}  // namespace

Verdict judge(const ErrorMetrics& m, const Tolerance& tol) {
  Verdict v;
  v.metrics = m;
  if (std::string why = unjudgeable(m); !why.empty()) {
    v.reason = std::move(why);
  } else if (m.max_abs_err <= tol.abs_floor) {
    // Every element is within the output type's absolute resolution (tolerance.hpp, abs_floor):
    // no relative bound can be met more closely by a correctly rounded output.
    v.ok = true;
  } else if (!(m.rel_err <= tol.rel_l2)) {
    v.reason =
        fmt::format("relative error {:.3g} > {:.3g} ({} tolerance); max abs error {:.3g} > abs floor {:.3g}",
                    m.rel_err, tol.rel_l2, to_string(tol.dtype), m.max_abs_err, tol.abs_floor);
  } else if (!(m.max_abs_err <= tol.max_abs_rel * m.max_abs_ref)) {
    v.reason =
        fmt::format("max abs error {:.3g} > {:.3g} x max|ref| {:.3g} ({} tolerance); relative error {:.3g}",
                    m.max_abs_err, tol.max_abs_rel, m.max_abs_ref, to_string(tol.dtype), m.rel_err);
  } else {
    v.ok = true;
  }
  return v;
}

Verdict judge(const ErrorMetrics& m, DType dtype, double rel_l2, std::optional<double> abs) {
  Tolerance t = tolerance_for(dtype);
  if (rel_l2 > 0) {
    t.rel_l2 = rel_l2;
    t.max_abs_rel = std::max(t.max_abs_rel, 10 * rel_l2);
  }
  if (!abs) return judge(m, t);
  if (rel_l2 > 0) {
    t.abs_floor = std::max(t.abs_floor, *abs);  // either bound passes
    return judge(m, t);
  }
  return judge_absolute(m, *abs, to_string(dtype));
}

Verdict judge_absolute(const ErrorMetrics& m, double bound, std::string_view type) {
  Verdict v;
  v.metrics = m;
  if (std::string why = unjudgeable(m); !why.empty()) {
    v.reason = std::move(why);
  } else if (!(m.max_abs_err <= bound)) {
    v.reason = bound == 0 ? fmt::format("max abs error {:.6g}: {} outputs differ (compared exactly)",
                                        m.max_abs_err, type)
                          : fmt::format("max abs error {:.6g} > absolute bound {:.6g} ({} output)",
                                        m.max_abs_err, bound, type);
  } else {
    v.ok = true;
  }
  return v;
}

}  // namespace ktune::measure
