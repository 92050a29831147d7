#pragma once
/// The reporter interface: one ReportData, written in one format. CSV, JSON, Markdown and HTML
/// are siblings behind it (csv_reporter.hpp, json_reporter.hpp, markdown_reporter.hpp,
/// html_reporter.hpp); formats() is the one table of them that `ktune report`, the service's
/// /v1/report and write_report_file read.

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "reports/report_data.hpp"

namespace ktune::reports {

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

/// One report format: its name and the other names it answers to, the media type the service
/// sends it as, a line of help, and how its writer is made.
struct FormatEntry {
  std::string name;
  std::vector<std::string> aliases;
  std::string media_type;
  std::string help;
  std::unique_ptr<Reporter> (*make)(const ReporterOptions& options) = nullptr;
};

/// Every format, in the order help texts list them (reporter.cpp). A new format is its writer's
/// files plus a row there (docs/extending.md).
const std::vector<FormatEntry>& formats();
/// Adds a format at run time (a test's toy format); throws ktune::Error(kBadInput) for a name or
/// alias the table holds. Not thread-safe: call before reports are written.
void register_format(FormatEntry entry);
/// The format named `name` or one of its aliases (a copy: the table may grow); throws
/// ktune::Error(kBadInput) naming the value and the known formats.
FormatEntry find_format(std::string_view name);
/// Every name and alias, for a command line's choice ("csv", "json", "md", "markdown", "html").
std::vector<std::string> format_choices();
/// The names, "csv, json, md or html".
std::string format_names();

/// The reporter for format `name` (or an alias).
std::unique_ptr<Reporter> make_reporter(std::string_view name, const ReporterOptions& options = {});

/// Writes the report into `path` through a temporary file renamed into place, so a reader never
/// sees half a report. Throws ktune::Error(kRuntime) naming the path when it cannot be written.
void write_report_file(const ReportData& data, std::string_view format, const std::filesystem::path& path,
                       const ReporterOptions& options = {});

}  // namespace ktune::reports
