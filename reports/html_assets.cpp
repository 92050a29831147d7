#include "reports/html_assets.hpp"

#include <string>

#include "ktune/error.hpp"

namespace ktune::reports {
namespace {

std::string_view asset(std::string_view name) {
  for (std::size_t i = 0; i < detail::kEmbeddedFileCount; ++i) {
    if (detail::kEmbeddedFiles[i].name == name) return detail::kEmbeddedFiles[i].text;
  }
  throw Error(ErrorKind::kNotFound, "the HTML report asset '" + std::string(name) + "' is not embedded");
}

}  // namespace

std::string_view html_style() { return asset("report.css"); }

std::string_view html_error_hook_script() { return asset("error_hook.js"); }

std::string_view html_page_script() { return asset("report.js"); }

}  // namespace ktune::reports
