#pragma once
/// A GPU's measured ceilings as the HTML and Markdown reports print them.

#include <string>
#include <string_view>

namespace ktune::reports {

/// "bf16_tflops 772 · copy_gbps 4280" from a ceilings JSON object (GpuInfo::ceilings_json), each
/// number with the significant digits the tables use (number_format.hpp: human()); text values
/// as they are, nested values as compact JSON; "not measured" for an empty object or one that is
/// not an object. The JSON and CSV reports keep the full numbers.
std::string ceilings_text(std::string_view ceilings_json);

}  // namespace ktune::reports
