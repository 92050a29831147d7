#pragma once
/// HTML: one self-contained page that opens offline — Chart.js (Debian's libjs-chart.js) inlined,
/// no network at all (a Content-Security-Policy forbids every fetch). A header with the GPUs and
/// their ceilings, ktune's version and the runs; per kernel the winners per shape with speed-up
/// and % of roofline, five charts (html_chart_data.hpp) and the counters of the winners.
/// Every string is escaped: HTML text through escape.hpp's html(), the chart data as JSON made
/// safe for a <script> element (json_for_script), and the page script writes no markup.

#include <filesystem>

#include "reports/reporter.hpp"

namespace ktune::reports {

class HtmlReporter final : public Reporter {
 public:
  /// `chart_js`: the Chart.js file to inline.
  explicit HtmlReporter(std::filesystem::path chart_js);
  /// Throws ktune::Error(kRuntime) naming the file and the package when Chart.js cannot be read.
  void write(const ReportData& data, std::ostream& out) const override;

 private:
  std::filesystem::path chart_js_;
};

}  // namespace ktune::reports
