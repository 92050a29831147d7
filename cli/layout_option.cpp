#include "cli/layout_option.hpp"

namespace ktune::cli {
namespace {

std::string shown(const std::string& layout) { return layout.empty() ? "\"\"" : layout; }

}  // namespace

std::string resolve_layout(const kernel_templates::KernelDescriptor& kernel,
                           const std::optional<std::string>& asked) {
  std::string layout = asked.value_or(kernel.default_layout);
  kernel.require_layout(layout);
  return layout;
}

std::string layouts_help() {
  std::string out;
  for (const auto& k : kernel_templates::kernel_catalog()) {
    out += "  " + k.name + ": " + shown(k.default_layout) + " (default)";
    for (const auto& l : k.layouts) {
      if (l != k.default_layout) out += ", " + shown(l);
    }
    out += "\n";
  }
  return out;
}

}  // namespace ktune::cli
