#pragma once
/// A list of names for a message or a help text: "csv, json, md or html".

#include <string>
#include <vector>

namespace ktune {

/// The names joined by ", " with " or " before the last ("" for none, the name for one).
std::string name_list(const std::vector<std::string>& names);

}  // namespace ktune
