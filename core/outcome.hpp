#pragma once
/// The outcome of one measurement (docs/design.md "Names and outcomes"): what the harness reports for a
/// candidate, what the cache stores and what the reports count. One definition in core/, shared by
/// measure/ and cache/, which may not depend on each other.

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "ktune/error.hpp"

namespace ktune {

enum class Outcome {
  kOk,
  kCompileError,
  kExceedsLimits,
  kLaunchError,
  kIncorrect,
  kTimeout,
  kCrashed,
  kSkipped
};

namespace detail {
inline constexpr std::array<std::pair<Outcome, std::string_view>, 8> kOutcomeNames{{
    {Outcome::kOk, "ok"},
    {Outcome::kCompileError, "compile_error"},
    {Outcome::kExceedsLimits, "exceeds_limits"},
    {Outcome::kLaunchError, "launch_error"},
    {Outcome::kIncorrect, "incorrect"},
    {Outcome::kTimeout, "timeout"},
    {Outcome::kCrashed, "crashed"},
    {Outcome::kSkipped, "skipped"},
}};
}  // namespace detail

/// How many outcomes there are; Outcome values are 0 .. kOutcomeCount - 1.
inline constexpr std::size_t kOutcomeCount = detail::kOutcomeNames.size();

/// "ok", "compile_error", "exceeds_limits", "launch_error", "incorrect", "timeout", "crashed", "skipped".
inline std::string_view to_string(Outcome outcome) {
  for (const auto& [o, name] : detail::kOutcomeNames) {
    if (o == outcome) return name;
  }
  return "unknown";
}

/// Inverse of to_string; throws ktune::Error(kBadInput) naming the value and the known names.
inline Outcome outcome_from_string(std::string_view name) {
  for (const auto& [o, n] : detail::kOutcomeNames) {
    if (n == name) return o;
  }
  throw Error(ErrorKind::kBadInput, "unknown outcome '" + std::string(name) +
                                        "' (expected ok, compile_error, exceeds_limits, launch_error, "
                                        "incorrect, timeout, crashed or skipped)");
}

}  // namespace ktune
