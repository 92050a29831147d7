#pragma once
/// The fixed parts of the HTML report: its style sheet, the error hook that runs before anything
/// else, and the script that draws the charts from the page's JSON data (html_chart_data.hpp).
/// They are files (reports/assets/report.css, error_hook.js, report.js) embedded at build time.

#include <cstddef>
#include <string_view>

namespace ktune::reports {

/// CSS for screen (laptop width) and print (assets/report.css).
std::string_view html_style();
/// Records script errors and console.error calls in window.__ktuneErrors, read by the self-test
/// (assets/error_hook.js).
std::string_view html_error_hook_script();
/// Draws every chart with Chart.js (and the heat map on a plain canvas). With `#selftest` in the
/// URL it then writes {"errors":[..],"canvases":{id:non-blank pixel count},"scripts":n,"charts":
/// Chart.js charts made,"messages":[ids of canvases showing a "no data" message]} as JSON into
/// <pre id="ktune-selftest">, which the browser test reads (assets/report.js).
std::string_view html_page_script();

namespace detail {
/// One embedded asset (cmake/embed_files.cmake writes the table into html_assets_data.cpp).
struct EmbeddedFile {
  std::string_view name;  ///< file name, e.g. "report.css"
  std::string_view text;
};
extern const EmbeddedFile kEmbeddedFiles[];
extern const std::size_t kEmbeddedFileCount;
}  // namespace detail

}  // namespace ktune::reports
