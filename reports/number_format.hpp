#pragma once
/// Numbers as report text: exact (shortest round-trip) for machine formats, rounded for people.

#include <optional>
#include <string>

namespace ktune::reports {

/// Appends `value` in the shortest form that reads back exactly; nothing when absent or not finite.
void append_number(std::string& out, std::optional<double> value);
/// Appends `value` as a JSON number; `null` when absent or not finite.
void append_json_number(std::string& out, std::optional<double> value);
/// `value` with `digits` significant digits for people ("1.23", "4280", "0.00123"); "–" when absent.
std::string human(std::optional<double> value, int digits = 3);

}  // namespace ktune::reports
