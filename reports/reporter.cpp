#include "reports/reporter.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "core/name_list.hpp"
#include "ktune/error.hpp"
#include "reports/csv_reporter.hpp"
#include "reports/html_reporter.hpp"
#include "reports/json_reporter.hpp"
#include "reports/markdown_reporter.hpp"

namespace ktune::reports {

namespace {

std::vector<FormatEntry>& table() {
  static std::vector<FormatEntry> t{
      {"csv",
       {},
       "text/csv; charset=utf-8",
       "one row a measurement",
       [](const ReporterOptions&) -> std::unique_ptr<Reporter> { return std::make_unique<CsvReporter>(); }},
      {"json",
       {},
       "application/json",
       "one document",
       [](const ReporterOptions&) -> std::unique_ptr<Reporter> { return std::make_unique<JsonReporter>(); }},
      {"md",
       {"markdown"},
       "text/markdown; charset=utf-8",
       "short summary",
       [](const ReporterOptions&) -> std::unique_ptr<Reporter> {
         return std::make_unique<MarkdownReporter>();
       }},
      {"html",
       {},
       "text/html; charset=utf-8",
       "self-contained page with charts",
       [](const ReporterOptions& o) -> std::unique_ptr<Reporter> {
         return std::make_unique<HtmlReporter>(o.chart_js);
       }},
  };
  return t;
}

const FormatEntry* lookup(std::string_view name) {
  for (const FormatEntry& e : table()) {
    if (e.name == name) return &e;
    for (const std::string& a : e.aliases)
      if (a == name) return &e;
  }
  return nullptr;
}

}  // namespace

const std::vector<FormatEntry>& formats() { return table(); }

void register_format(FormatEntry entry) {
  if (entry.name.empty() || entry.make == nullptr || entry.media_type.empty())
    throw Error(ErrorKind::kBadInput, "register_format: a format needs a name, a media type and a writer");
  if (lookup(entry.name) != nullptr)
    throw Error(ErrorKind::kBadInput, fmt::format("register_format: '{}' is a format already", entry.name));
  for (const std::string& a : entry.aliases)
    if (lookup(a) != nullptr)
      throw Error(ErrorKind::kBadInput, fmt::format("register_format: '{}' is a format already", a));
  table().push_back(std::move(entry));
}

std::string format_names() {
  std::vector<std::string> names;
  for (const auto& e : table()) names.push_back(e.name);
  return name_list(names);
}

std::vector<std::string> format_choices() {
  std::vector<std::string> out;
  for (const FormatEntry& e : table()) {
    out.push_back(e.name);
    out.insert(out.end(), e.aliases.begin(), e.aliases.end());
  }
  return out;
}

FormatEntry find_format(std::string_view name) {
  if (const FormatEntry* e = lookup(name)) return *e;
  throw Error(ErrorKind::kBadInput,
              fmt::format("unknown report format '{}' (expected {})", name, format_names()));
}

std::unique_ptr<Reporter> make_reporter(std::string_view name, const ReporterOptions& options) {
  return find_format(name).make(options);
}

void write_report_file(const ReportData& data, std::string_view format, const std::filesystem::path& path,
                       const ReporterOptions& options) {
  if (path.empty())
    throw Error(ErrorKind::kBadInput, "the report's output path is empty (--out FILE, or - for stdout)");
  std::error_code status_ec;
  if (std::filesystem::is_directory(path, status_ec)) {
    throw Error(
        ErrorKind::kBadInput,
        fmt::format("'{}' is a folder; the report's output must be a file path, e.g. '{}'", path.string(),
                    (path / fmt::format("report.{}", find_format(format).name)).string()));
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
