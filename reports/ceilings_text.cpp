#include "reports/ceilings_text.hpp"

#include <nlohmann/json.hpp>

#include "reports/number_format.hpp"

namespace ktune::reports {

std::string ceilings_text(std::string_view ceilings_json) {
  const nlohmann::json object = nlohmann::json::parse(ceilings_json, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object() || object.empty()) return "not measured";
  std::string text;
  for (const auto& [name, value] : object.items()) {
    if (!text.empty()) text += " · ";
    text += name;
    text += ' ';
    if (value.is_number()) {
      text += human(value.get<double>());
    } else if (value.is_string()) {
      text += value.get<std::string>();
    } else {
      text += value.dump();
    }
  }
  return text;
}

}  // namespace ktune::reports
