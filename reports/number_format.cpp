#include "reports/number_format.hpp"

#include <cmath>
#include <iterator>

#include <fmt/format.h>

namespace ktune::reports {

void append_number(std::string& out, std::optional<double> value) {
  if (value && std::isfinite(*value)) fmt::format_to(std::back_inserter(out), "{}", *value);
}

void append_json_number(std::string& out, std::optional<double> value) {
  if (value && std::isfinite(*value)) {
    fmt::format_to(std::back_inserter(out), "{}", *value);
  } else {
    out += "null";
  }
}

std::string human(std::optional<double> value, int digits) {
  if (!value || !std::isfinite(*value)) return "\u2013";
  const double magnitude = std::abs(*value);
  if (magnitude >= 1e15 || (magnitude > 0 && magnitude < 1e-4)) return fmt::format("{:.{}g}", *value, digits);
  // Enough decimals for `digits` significant digits, never fewer than the integer part.
  const int integer_digits = magnitude >= 1 ? static_cast<int>(std::floor(std::log10(magnitude))) + 1 : 0;
  const int leading_zeros =
      magnitude > 0 && magnitude < 1 ? -static_cast<int>(std::floor(std::log10(magnitude))) - 1 : 0;
  const int decimals = std::max(0, digits - integer_digits) + leading_zeros;
  return fmt::format("{:.{}f}", *value, decimals);
}

}  // namespace ktune::reports
