#include "reports/html_reporter.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "ktune/error.hpp"
#include "reports/ceilings_text.hpp"
#include "reports/compile_only.hpp"
#include "reports/counter_table.hpp"
#include "reports/escape.hpp"
#include "reports/html_assets.hpp"
#include "reports/html_chart_data.hpp"
#include "reports/number_format.hpp"
#include "reports/resource_table.hpp"

namespace ktune::reports {
namespace {

/// Runs listed in the header; older ones are counted, not listed (a long-lived database has
/// hundreds, and the CSV has every run id).
constexpr size_t kMaxRunsListed = 50;

std::string read_chart_js(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(
        ErrorKind::kRuntime,
        fmt::format(
            "cannot read Chart.js at '{}', which HTML reports inline: install Debian's "
            "libjs-chart.js (scripts/install-deps.sh) or set KTUNE_CHART_JS to a copy of chart.min.js",
            path.string()));
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (text.empty() || lower.find("</script") != std::string::npos ||
      lower.find("<!--") != std::string::npos) {
    throw Error(ErrorKind::kRuntime, fmt::format("'{}' is empty or cannot be inlined into a <script> element "
                                                 "(it contains '</script' or '<!--')",
                                                 path.string()));
  }
  return text;
}

void cell(std::string& out, std::string_view text) {
  out += "<td>";
  append_html(out, text);
  out += "</td>";
}
void code_cell(std::string& out, std::string_view text) {
  out += "<td><code>";
  append_html(out, text);
  out += "</code></td>";
}
void num_cell(std::string& out, const std::string& text) {
  out += "<td class=\"num\">";
  append_html(out, text);
  out += "</td>";
}
void header_row(std::string& out, std::initializer_list<std::string_view> names) {
  out += "<thead><tr>";
  for (const std::string_view name : names) {
    out += "<th>";
    append_html(out, name);
    out += "</th>";
  }
  out += "</tr></thead>";
}

void write_header(std::string& out, const ReportData& data) {
  out += "<header><h1>ktune report</h1><p class=\"meta\">";
  size_t listed = 0;
  for (const ReportRow& row : data.rows) listed += data.listed(row) ? 1 : 0;
  append_html(out, fmt::format("ktune {} · generated {} · {} measurements{} · {} kernels", data.ktune_version,
                               data.generated_at, listed, data.winners_only ? " (winners only)" : "",
                               data.kernels.size()));
  if (!data.db_path.empty()) append_html(out, " · database " + data.db_path);
  const cache::Filter& f = data.filter;
  if (!f.gpu_name.empty() || !f.kernel.empty() || f.dtype || f.run_id) {
    append_html(
        out, fmt::format(" · filter: gpu={} kernel={} dtype={} run={}", f.gpu_name.empty() ? "*" : f.gpu_name,
                         f.kernel.empty() ? "*" : f.kernel, f.dtype ? to_string(*f.dtype) : "*",
                         f.run_id ? std::to_string(*f.run_id) : "*"));
  }
  out += "</p>\n<h3>GPUs</h3><div class=\"table-wrap\"><table id=\"gpus\">";
  header_row(out, {"GPU", "compute capability", "SMs", "memory", "ceilings"});
  out += "<tbody>";
  for (const cache::GpuInfo& gpu : data.gpus) {
    out += "<tr>";
    cell(out, gpu.name);
    cell(out, fmt::format("{}.{}", gpu.cc_major, gpu.cc_minor));
    num_cell(out, std::to_string(gpu.sm_count));
    num_cell(out,
             fmt::format("{:.1f} GiB", static_cast<double>(gpu.memory_bytes) / (1024.0 * 1024.0 * 1024.0)));
    cell(out, ceilings_text(gpu.ceilings_json));
    out += "</tr>";
  }
  out += "</tbody></table></div>\n<h3>Runs</h3><div class=\"table-wrap\"><table id=\"runs\">";
  header_row(out, {"run", "started", "host", "ktune", "driver", "CUDA", "arguments"});
  out += "<tbody>";
  const size_t first = data.runs.size() > kMaxRunsListed ? data.runs.size() - kMaxRunsListed : 0;
  for (size_t i = first; i < data.runs.size(); ++i) {
    const ReportRun& run = data.runs[i];
    out += "<tr>";
    num_cell(out, std::to_string(run.id));
    cell(out, run.info.started_at);
    cell(out, run.info.host);
    cell(out, run.info.ktune_version);
    cell(out, run.info.driver_version);
    cell(out, run.info.cuda_version);
    code_cell(out, run.info.arguments);
    out += "</tr>";
  }
  out += "</tbody></table></div>";
  if (first > 0) append_html(out, fmt::format("<p class=\"meta\">…and {} older runs.</p>", first));
  out += "</header>\n<nav>";
  for (size_t k = 0; k < data.kernels.size(); ++k) {
    fmt::format_to(std::back_inserter(out), "<a href=\"#kernel-{}\">", k);
    append_html(out, data.kernels[k]);
    out += "</a>";
  }
  out += "</nav>\n";
}

void write_winners(std::string& out, const ReportData& data, const std::string& kernel, size_t k) {
  fmt::format_to(
      std::back_inserter(out),
      "<h3>Winners per shape</h3><div class=\"table-wrap\"><table class=\"winners\" id=\"winners-{}\">", k);
  header_row(out, {"GPU", "shape", "dtype", "layout", "winner", "median µs", "baseline", "baseline µs",
                   "speed-up", "TFLOP/s", "GB/s", "% of roofline", "bound", "timed", "configs"});
  out += "<tbody>";
  for (const ReportKey& key : data.keys) {
    if (key.kernel != kernel || !key.winner) continue;
    const ReportRow& w = data.rows[*key.winner];
    const ReportRow* b = key.baseline ? &data.rows[*key.baseline] : nullptr;
    int64_t configs = 0;
    for (const int64_t n : key.outcome_counts) configs += n;
    out += "<tr>";
    cell(out, data.gpus[key.gpu].name);
    code_cell(out, key.shape);
    cell(out, to_string(key.dtype));
    cell(out, key.layout.empty() ? "–" : key.layout);
    code_cell(out, w.stored.m.verified ? w.stored.m.config_name : w.stored.m.config_name + " (unverified)");
    num_cell(out, human(w.median_us(), 4));
    cell(out, b ? b->stored.m.baseline : "–");
    num_cell(out, b ? human(b->median_us(), 4) : "–");
    num_cell(out, w.speedup ? human(w.speedup) + "×" : "–");
    num_cell(out, human(w.roofline.tflops));
    num_cell(out, human(w.roofline.gbps));
    num_cell(out, human(w.roofline.pct_of_ceiling));
    cell(out, w.roofline.bound);
    cell(out, w.timing.empty() ? "–" : w.timing);
    num_cell(out, std::to_string(configs));
    out += "</tr>";
  }
  out += "</tbody></table></div>\n";
}

void write_counters(std::string& out, const ReportData& data, const std::string& kernel, size_t k) {
  const CounterTable table = counter_table(data, kernel);
  out += "<h3>Counters of the winners</h3>";
  if (!table.has_metrics()) {
    out += "<p class=\"empty\">No hardware counters were recorded for these winners";
    // One shared reason ("not requested", CUPTI missing) says why; several are in the JSON report.
    std::string reason = table.rows.empty() ? std::string() : table.rows.front().note;
    for (const CounterTable::Row& row : table.rows) {
      if (row.note != reason) reason.clear();
    }
    if (!reason.empty()) append_html(out, " (" + reason + ")");
    out += ".</p>\n";
    return;
  }
  const bool many_gpus = data.gpus.size() > 1;
  const bool notes = table.has_notes();
  fmt::format_to(std::back_inserter(out),
                 "<div class=\"table-wrap\"><table class=\"counters\" id=\"counters-{}\"><thead><tr>", k);
  if (many_gpus) out += "<th>GPU</th>";
  out += "<th>shape</th><th>dtype</th><th>layout</th>";
  for (const std::string& name : table.columns) {
    out += "<th><code>";
    append_html(out, name);
    out += "</code>";
    if (const std::string unit = counter_unit(name); !unit.empty()) {
      out += " <span class=\"unit\">(";
      append_html(out, unit);
      out += ")</span>";
    }
    out += "</th>";
  }
  if (notes) out += "<th>note</th>";
  out += "</tr></thead><tbody>";
  for (const CounterTable::Row& row : table.rows) {
    const ReportKey& key = data.keys[row.key];
    out += "<tr>";
    if (many_gpus) cell(out, data.gpus[key.gpu].name);
    code_cell(out, key.shape);
    cell(out, to_string(key.dtype));
    cell(out, key.layout.empty() ? "–" : key.layout);
    for (const std::string& value : row.cells) num_cell(out, value.empty() ? "–" : value);
    if (notes) cell(out, row.note);
    out += "</tr>";
  }
  out += "</tbody></table></div>\n";
}

void write_figure(std::string& out, size_t k, std::string_view name, std::string_view title,
                  std::string_view note) {
  fmt::format_to(std::back_inserter(out),
                 "<figure><figcaption>{} <small>{}</small></figcaption><div class=\"chart-box\"><canvas "
                 "id=\"chart-{}-{}\" "
                 "role=\"img\" aria-label=\"{}\"></canvas></div></figure>\n",
                 html(title), html(note), k, name, html(title));
}

/// Charts with nothing to draw (null in the chart data) are left out; so is the whole grid when
/// none has anything.
void write_charts(std::string& out, const nlohmann::json& charts, size_t k) {
  const nlohmann::json& kernel = charts["kernels"][k];
  struct Figure {
    std::string_view name, title;
    std::string note;
  };
  std::vector<Figure> figures;
  figures.push_back({"speedup", "Speed-up over the baseline by shape", "baseline time / winner time"});
  figures.push_back(
      {"roofline", "Achieved vs ceiling",
       "every timed config, winners named; dotted: each baseline to its winner; dashed: the GPU's ceilings"});
  const nlohmann::json& heatmap = kernel["heatmap"];
  figures.push_back({"heatmap", "Time over the config space",
                     heatmap.is_null()
                         ? std::string()
                         : fmt::format("{} × {} at {}; each cell the fastest over the other parameters",
                                       heatmap["x"].get<std::string>(), heatmap["y"].get<std::string>(),
                                       heatmap["key"].get<std::string>())});
  figures.push_back({"spread", "Spread of candidate times", "relative to each shape's winner"});
  figures.push_back({"outcomes", "Outcome counts", ""});
  std::erase_if(figures, [&](const Figure& f) { return kernel[std::string(f.name)].is_null(); });
  if (figures.empty()) return;
  out += "<div class=\"charts\">\n";
  for (const Figure& f : figures) write_figure(out, k, f.name, f.title, f.note);
  out += "</div>\n";
}

/// A compile-only kernel's configs with what each uses and the blocks an SM holds with it.
void write_resources(std::string& out, const ReportData& data, const std::string& kernel, size_t k) {
  const auto rows = kernel_resources(data, kernel);
  if (rows.empty()) return;
  out +=
      "<h3>Compiled configs</h3><p class=\"note\">Registers a thread, shared memory a block, spilled "
      "bytes, threads a block, and the blocks an SM holds with them on the compiled arch (the occupancy "
      "limit, and the resource that sets it).</p>";
  fmt::format_to(
      std::back_inserter(out),
      "<div class=\"table-wrap\"><table class=\"resources\" id=\"resources-{}\"><thead><tr><th>shape</th>"
      "<th>dtype</th><th>layout</th><th>config</th><th>registers</th><th>shared memory</th>"
      "<th>spills</th><th>threads</th><th>arch</th><th>blocks/SM</th></tr></thead><tbody>",
      k);
  for (const auto& [i, res] : rows) {
    const ReportRow& row = data.rows[i];
    const ReportKey& key = data.keys[row.key];
    out += "<tr>";
    code_cell(out, key.shape);
    cell(out, to_string(key.dtype));
    cell(out, key.layout.empty() ? "–" : key.layout);
    code_cell(out, row.stored.m.config_name);
    num_cell(out, std::to_string(res.registers));
    num_cell(out, bytes_text(res.shared_bytes));
    num_cell(out, bytes_text(res.spill_bytes));
    num_cell(out, std::to_string(res.threads_per_block));
    cell(out, res.arch.empty() ? "–" : res.arch);
    cell(out, occupancy_text(res));
    out += "</tr>";
  }
  out += "</tbody></table></div>\n";
}

void write_kernel(std::string& out, const ReportData& data, const nlohmann::json& charts, size_t k) {
  const std::string& kernel = data.kernels[k];
  fmt::format_to(std::back_inserter(out), "<section class=\"kernel\" id=\"kernel-{}\"><h2>", k);
  append_html(out, kernel);
  out += "</h2>\n";
  const std::string_view no_winner = no_winner_note(data, kernel);
  if (no_winner.empty()) {
    write_winners(out, data, kernel, k);
  } else {
    fmt::format_to(std::back_inserter(out),
                   "<p class=\"empty{}\">No winner: ", no_winner == kCompileOnlyNote ? " compile-only" : "");
    append_html(out, no_winner);
    out += ".</p>\n";
    if (no_winner == kCompileOnlyNote) write_resources(out, data, kernel, k);
  }
  write_charts(out, charts, k);
  if (no_winner.empty()) write_counters(out, data, kernel, k);
  out += "</section>\n";
}

}  // namespace

HtmlReporter::HtmlReporter(std::filesystem::path chart_js) : chart_js_(std::move(chart_js)) {}

void HtmlReporter::write(const ReportData& data, std::ostream& out) const {
  const std::string chart_js = read_chart_js(chart_js_);
  const nlohmann::json charts = html_chart_data(data);
  std::string page;
  page.reserve(chart_js.size() + (1 << 16));
  page +=
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src "
      "'unsafe-inline'; "
      "style-src 'unsafe-inline'; img-src data:\">\n<title>";
  append_html(page, fmt::format("ktune report — {}", data.kernels.empty()
                                                         ? "no kernels"
                                                         : fmt::format("{}", fmt::join(data.kernels, ", "))));
  page += "</title>\n<style>";
  page += html_style();
  page += "</style>\n<script>";
  page += html_error_hook_script();
  page += "</script>\n</head>\n<body>\n";
  write_header(page, data);
  if (data.kernels.empty()) page += "<p class=\"empty\">No measurements match the filter.</p>\n";
  for (size_t k = 0; k < data.kernels.size(); ++k) write_kernel(page, data, charts, k);
  page += "<pre id=\"ktune-selftest\" hidden></pre>\n<script type=\"application/json\" id=\"ktune-data\">";
  page += json_for_script(charts.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  page += "</script>\n<script>\n";
  page += chart_js;
  page += "\n</script>\n<script>";
  page += html_page_script();
  page += "</script>\n</body></html>\n";
  out.write(page.data(), static_cast<std::streamsize>(page.size()));
}

}  // namespace ktune::reports
