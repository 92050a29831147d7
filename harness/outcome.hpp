#pragma once
/// Outcome of one candidate as the harness reports it. The names are exactly those of
/// ktune::cache::Outcome (DESIGN.md "Names and outcomes"); the harness does not depend on the
/// cache, so the tuner maps one to the other by name (cache::outcome_from_string(to_string(o))).

#include <string_view>

namespace ktune::harness {

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

/// "ok", "compile_error", "exceeds_limits", "launch_error", "incorrect", "timeout", "crashed", "skipped".
std::string_view to_string(Outcome outcome);
/// Inverse of to_string; throws ktune::Error(kBadInput) on an unknown name.
Outcome outcome_from_string(std::string_view name);

}  // namespace ktune::harness
