#pragma once
/// The fixed parts of the HTML report: its style sheet, the error hook that runs before anything
/// else, and the script that draws the charts from the page's JSON data (html_chart_data.hpp).

#include <string_view>

namespace ktune::reports {

/// CSS for screen (laptop width) and print.
std::string_view html_style();
/// Records script errors and console.error calls in window.__ktuneErrors (read by the self-test).
std::string_view html_error_hook_script();
/// Draws every chart with Chart.js (and the heat map on a plain canvas). With `#selftest` in the
/// URL it then writes {"errors":[..],"canvases":{id:non-blank pixel count},"scripts":n,"charts":
/// Chart.js charts made,"messages":[ids of canvases showing a "no data" message]} as JSON into
/// <pre id="ktune-selftest">, which the browser test reads.
std::string_view html_page_script();

}  // namespace ktune::reports
