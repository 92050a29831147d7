#include "cli/error_report.hpp"

#include <iostream>

namespace ktune::cli {

int report_error(const Error& error) {
  std::cerr << "ktune: error: " << error.what() << "\n";
  if (!error.api_code().empty() || !error.where().empty()) {
    std::cerr << "  (" << error.api_code()
              << (error.api_code().empty() || error.where().empty() ? "" : " at ") << error.where() << ")\n";
  }
  if (!error.detail().empty()) std::cerr << error.detail() << (error.detail().back() == '\n' ? "" : "\n");
  return exit_code(error.kind());
}

}  // namespace ktune::cli
