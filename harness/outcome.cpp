#include "harness/outcome.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::harness {

namespace {
constexpr std::array<std::pair<Outcome, std::string_view>, 8> kNames{{
    {Outcome::kOk, "ok"},
    {Outcome::kCompileError, "compile_error"},
    {Outcome::kExceedsLimits, "exceeds_limits"},
    {Outcome::kLaunchError, "launch_error"},
    {Outcome::kIncorrect, "incorrect"},
    {Outcome::kTimeout, "timeout"},
    {Outcome::kCrashed, "crashed"},
    {Outcome::kSkipped, "skipped"},
}};
}  // namespace

std::string_view to_string(Outcome outcome) {
  for (const auto& [o, name] : kNames) {
    if (o == outcome) return name;
  }
  return "?";
}

Outcome outcome_from_string(std::string_view name) {
  for (const auto& [o, n] : kNames) {
    if (n == name) return o;
  }
  throw Error(ErrorKind::kBadInput, fmt::format("unknown outcome '{}'", name));
}

}  // namespace ktune::harness
