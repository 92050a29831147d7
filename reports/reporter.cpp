#include "reports/reporter.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "ktune/error.hpp"
#include "reports/csv_reporter.hpp"
#include "reports/html_reporter.hpp"
#include "reports/json_reporter.hpp"
#include "reports/markdown_reporter.hpp"

namespace ktune::reports {

Format parse_format(std::string_view name) {
  if (name == "csv") return Format::kCsv;
  if (name == "json") return Format::kJson;
  if (name == "md" || name == "markdown") return Format::kMarkdown;
  if (name == "html") return Format::kHtml;
  throw Error(ErrorKind::kBadInput,
              fmt::format("unknown report format '{}' (expected csv, json, html or md)", name));
}

std::string_view to_string(Format format) {
  switch (format) {
    case Format::kCsv:
      return "csv";
    case Format::kJson:
      return "json";
    case Format::kMarkdown:
      return "md";
    case Format::kHtml:
      return "html";
  }
  return "?";
}

std::unique_ptr<Reporter> make_reporter(Format format, const ReporterOptions& options) {
  switch (format) {
    case Format::kCsv:
      return std::make_unique<CsvReporter>();
    case Format::kJson:
      return std::make_unique<JsonReporter>();
    case Format::kMarkdown:
      return std::make_unique<MarkdownReporter>();
    case Format::kHtml:
      return std::make_unique<HtmlReporter>(options.chart_js);
  }
  throw Error(ErrorKind::kBadInput, "unknown report format");
}

void write_report_file(const ReportData& data, Format format, const std::filesystem::path& path,
                       const ReporterOptions& options) {
  if (path.empty())
    throw Error(ErrorKind::kBadInput, "the report's output path is empty (--out FILE, or - for stdout)");
  std::error_code status_ec;
  if (std::filesystem::is_directory(path, status_ec)) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("'{}' is a folder; the report's output must be a file path, e.g. '{}'",
                            path.string(), (path / fmt::format("report.{}", to_string(format))).string()));
  }
  if (const auto parent = path.parent_path();
      !parent.empty() && !std::filesystem::is_directory(parent, status_ec)) {
    throw Error(ErrorKind::kRuntime, fmt::format("cannot write report '{}': the folder '{}' does not exist",
                                                 path.string(), parent.string()));
  }
  const std::unique_ptr<Reporter> reporter = make_reporter(format, options);
  std::filesystem::path temp = path;
  temp += ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw Error(ErrorKind::kRuntime,
                  fmt::format("cannot write report '{}': {}", path.string(), std::strerror(errno)));
    }
    try {
      reporter->write(data, out);
    } catch (...) {
      out.close();
      std::error_code ignored;
      std::filesystem::remove(temp, ignored);
      throw;
    }
    out.flush();
    if (!out) {
      out.close();
      std::error_code ignored;
      std::filesystem::remove(temp, ignored);
      throw Error(ErrorKind::kRuntime, fmt::format("cannot write report '{}' (disk full?)", temp.string()));
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    const std::string why = ec.message();  // before remove() below reuses ec
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw Error(ErrorKind::kRuntime, fmt::format("cannot move report into '{}': {}", path.string(), why));
  }
}

}  // namespace ktune::reports
