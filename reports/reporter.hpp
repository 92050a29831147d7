#pragma once
/// The reporter interface: one ReportData, written in one format. CSV, JSON, Markdown and HTML
/// are siblings behind it (csv_reporter.hpp, json_reporter.hpp, markdown_reporter.hpp,
/// html_reporter.hpp); make_reporter picks one by format.

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "reports/report_data.hpp"

namespace ktune::reports {

enum class Format { kCsv, kJson, kMarkdown, kHtml };

/// "csv", "json", "md" (or "markdown"), "html"; throws ktune::Error(kBadInput) naming the value.
Format parse_format(std::string_view name);
std::string_view to_string(Format format);

/// Options a writer may need.
struct ReporterOptions {
  /// Chart.js, inlined into HTML reports (Debian's libjs-chart.js).
  std::filesystem::path chart_js = "/usr/share/javascript/chart.js/chart.min.js";
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  /// Writes the whole report to `out`. Throws ktune::Error on a failure (an unreadable asset:
  /// kRuntime).
  virtual void write(const ReportData& data, std::ostream& out) const = 0;
};

/// The reporter for `format`.
std::unique_ptr<Reporter> make_reporter(Format format, const ReporterOptions& options = {});

/// Writes the report into `path` through a temporary file renamed into place, so a reader never
/// sees half a report. Throws ktune::Error(kRuntime) naming the path when it cannot be written.
void write_report_file(const ReportData& data, Format format, const std::filesystem::path& path,
                       const ReporterOptions& options = {});

}  // namespace ktune::reports
