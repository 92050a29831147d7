#include "cli/error_report.hpp"

#include <iostream>
#include <string_view>

namespace ktune::cli {

int report_error(const Error& error) {
  const std::string_view message = error.what();
  std::cerr << "ktune: error: " << message << "\n";
  // An input error names its file and line first ("shapes.toml:4: ..."): said once is enough.
  const std::string_view where = message.starts_with(error.where()) ? std::string_view{} : error.where();
  if (!error.api_code().empty() || !where.empty()) {
    std::cerr << "  (" << error.api_code() << (error.api_code().empty() || where.empty() ? "" : " at ")
              << where << ")\n";
  }
  if (!error.detail().empty()) std::cerr << error.detail() << (error.detail().back() == '\n' ? "" : "\n");
  return exit_code(error.kind());
}

}  // namespace ktune::cli
