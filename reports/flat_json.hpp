#pragma once
/// Reads a stored JSON object (a config, counters) as sorted (name, value text) pairs without
/// building a JSON tree: nlohmann's SAX parser validates it and hands each member over. Reports
/// read 100,000 of these, and the tree was most of their cost.

#include <string_view>
#include <vector>

#include "reports/report_data.hpp"

namespace ktune::reports {

/// Whether `text` is a JSON object; if so, its members as (name, value text) pairs sorted by name
/// (strings unquoted, numbers as written, nested values as compact JSON) in `out`.
bool flatten_json_object(std::string_view text, std::vector<NamedValue>& out);

/// Whether `text` is a JSON object (validated, nothing built).
bool is_json_object(std::string_view text);

}  // namespace ktune::reports
