#pragma once
/// Helpers for the HTML report tests: write a page, count elements, read the embedded data.

#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>

#include "reports/html_reporter.hpp"

namespace ktune::reports::testing {

inline const std::filesystem::path kChartJs = "/usr/share/javascript/chart.js/chart.min.js";

inline std::string write_html(const ReportData& data) {
  std::ostringstream out;
  HtmlReporter(kChartJs).write(data, out);
  return out.str();
}

inline size_t count(std::string_view text, std::string_view needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

/// The text between `open` (searched from the start) and the next `close`.
inline std::string between(std::string_view text, std::string_view open, std::string_view close) {
  const size_t start = text.find(open);
  if (start == std::string_view::npos) return {};
  const size_t end = text.find(close, start + open.size());
  return std::string(text.substr(start + open.size(), end - start - open.size()));
}

}  // namespace ktune::reports::testing
