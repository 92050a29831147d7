#include "reports/markdown_reporter.hpp"

#include <iterator>

#include <fmt/format.h>

#include "reports/ceilings_text.hpp"
#include "reports/compile_only.hpp"
#include "reports/counter_table.hpp"
#include "reports/escape.hpp"
#include "reports/number_format.hpp"
#include "reports/resource_table.hpp"

namespace ktune::reports {
namespace {

/// Winners listed per kernel; a summary for a pull request stays readable below this, and the
/// HTML and CSV reports hold the rest.
constexpr size_t kMaxWinnerRows = 50;

std::string code(std::string_view text) {
  std::string out(1, '`');  // built by appends: GCC 12 warns falsely (-Wrestrict) on "`" + string
  out += markdown_cell(text);
  out += '`';
  return out;
}

std::string memory_text(int64_t bytes) {
  return fmt::format("{:.0f} GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

void write_gpus(std::string& out, const ReportData& data) {
  out += "| GPU | CC | SMs | memory | ceilings |\n|---|---|---:|---:|---|\n";
  for (const cache::GpuInfo& gpu : data.gpus) {
    fmt::format_to(std::back_inserter(out), "| {} | {}.{} | {} | {} | {} |\n", markdown_cell(gpu.name),
                   gpu.cc_major, gpu.cc_minor, gpu.sm_count, memory_text(gpu.memory_bytes),
                   markdown_cell(ceilings_text(gpu.ceilings_json)));
  }
}

/// The winners' counters, one row a winner (at most kMaxWinnerRows); nothing when none recorded any.
void write_counters(std::string& out, const ReportData& data, const std::string& kernel) {
  const CounterTable table = counter_table(data, kernel);
  if (!table.has_metrics()) return;
  const bool notes = table.has_notes();
  const bool many_gpus = data.gpus.size() > 1;
  out += "\nCounters of the winners:\n\n";
  if (many_gpus) out += "| GPU ";
  out += "| shape | dtype | layout |";
  for (const std::string& name : table.columns) {
    const std::string unit = counter_unit(name);
    fmt::format_to(std::back_inserter(out), " {}{} |", code(name), unit.empty() ? "" : " (" + unit + ")");
  }
  out += notes ? " note |\n" : "\n";
  if (many_gpus) out += "|---";
  out += "|---|---|---|";
  for (size_t i = 0; i < table.columns.size(); ++i) out += "---:|";
  out += notes ? "---|\n" : "\n";
  for (size_t r = 0; r < table.rows.size() && r < kMaxWinnerRows; ++r) {
    const CounterTable::Row& row = table.rows[r];
    const ReportKey& key = data.keys[row.key];
    if (many_gpus) fmt::format_to(std::back_inserter(out), "| {} ", markdown_cell(data.gpus[key.gpu].name));
    fmt::format_to(std::back_inserter(out), "| {} | {} | {} |", code(key.shape),
                   markdown_cell(to_string(key.dtype)),
                   key.layout.empty() ? std::string("–") : code(key.layout));
    for (const std::string& cell : row.cells)
      fmt::format_to(std::back_inserter(out), " {} |", cell.empty() ? std::string("–") : markdown_cell(cell));
    if (notes) out += row.note.empty() ? std::string(" |") : fmt::format(" {} |", markdown_cell(row.note));
    out += '\n';
  }
}

void write_outcomes(std::string& out, const ReportData& data, const std::string& kernel) {
  std::array<int64_t, kOutcomeCount> outcomes{};
  for (const ReportKey& key : data.keys) {
    if (key.kernel != kernel) continue;
    for (size_t i = 0; i < kOutcomeCount; ++i) outcomes[i] += key.outcome_counts[i];
  }
  out += "\nOutcomes:";
  for (size_t i = 0; i < kOutcomeCount; ++i) {
    if (outcomes[i] > 0) {
      fmt::format_to(std::back_inserter(out), " {} {},", outcome_name(static_cast<ktune::Outcome>(i)),
                     outcomes[i]);
    }
  }
  if (out.back() == ',') out.pop_back();
  out += '\n';
}

/// A compile-only kernel's configs with what each uses and the blocks an SM holds with it.
void write_resources(std::string& out, const ReportData& data, const std::string& kernel) {
  const auto rows = kernel_resources(data, kernel);
  if (rows.empty()) return;
  out +=
      "\nCompiled configs (blocks/SM: the occupancy limit on the compiled arch, and what sets it):\n\n"
      "| shape | dtype | layout | config | registers | shared memory | spills | threads | blocks/SM |\n"
      "|---|---|---|---|---:|---:|---:|---:|---|\n";
  for (size_t r = 0; r < rows.size() && r < kMaxWinnerRows; ++r) {
    const auto& [i, res] = rows[r];
    const ReportRow& row = data.rows[i];
    const ReportKey& key = data.keys[row.key];
    fmt::format_to(std::back_inserter(out), "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                   code(key.shape), markdown_cell(to_string(key.dtype)),
                   key.layout.empty() ? std::string("–") : code(key.layout), code(row.stored.m.config_name),
                   res.registers, bytes_text(res.shared_bytes), bytes_text(res.spill_bytes),
                   res.threads_per_block, occupancy_text(res));
  }
  if (rows.size() > kMaxWinnerRows) {
    fmt::format_to(std::back_inserter(out), "\n_…and {} more configs (see the HTML or CSV report)_\n",
                   rows.size() - kMaxWinnerRows);
  }
}

void write_kernel(std::string& out, const ReportData& data, const std::string& kernel) {
  fmt::format_to(std::back_inserter(out), "\n## {}\n\n", markdown_cell(kernel));
  const std::string_view no_winner = no_winner_note(data, kernel);
  if (!no_winner.empty()) {
    fmt::format_to(std::back_inserter(out), "_no winner: {}_\n", no_winner);
    if (no_winner == kCompileOnlyNote) write_resources(out, data, kernel);
    write_outcomes(out, data, kernel);
    return;
  }
  const bool many_gpus = data.gpus.size() > 1;
  if (many_gpus) out += "| GPU ";
  out +=
      "| shape | dtype | layout | winner | median µs | baseline | speed-up | TFLOP/s | GB/s | % roofline |\n";
  if (many_gpus) out += "|---";
  out += "|---|---|---|---|---:|---|---:|---:|---:|---:|\n";
  size_t listed = 0;
  size_t unlisted = 0;
  for (const ReportKey& key : data.keys) {
    if (key.kernel != kernel || !key.winner) continue;
    if (listed == kMaxWinnerRows) {
      ++unlisted;
      continue;
    }
    ++listed;
    const ReportRow& w = data.rows[*key.winner];
    const ReportRow* b = key.baseline ? &data.rows[*key.baseline] : nullptr;
    if (many_gpus) fmt::format_to(std::back_inserter(out), "| {} ", markdown_cell(data.gpus[key.gpu].name));
    fmt::format_to(
        std::back_inserter(out), "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", code(key.shape),
        markdown_cell(to_string(key.dtype)), key.layout.empty() ? std::string("–") : code(key.layout),
        code(w.stored.m.config_name) + (w.stored.m.verified ? "" : " **unverified**"), human(w.median_us()),
        b ? fmt::format("{} {}", markdown_cell(b->stored.m.baseline), human(b->median_us())) : "–",
        w.speedup ? human(w.speedup) + "×" : "–", human(w.roofline.tflops), human(w.roofline.gbps),
        human(w.roofline.pct_of_ceiling));
  }
  if (unlisted > 0) {
    fmt::format_to(std::back_inserter(out), "\n_…and {} more shapes (see the HTML or CSV report)_\n",
                   unlisted);
  }
  write_counters(out, data, kernel);
  write_outcomes(out, data, kernel);
}

}  // namespace

void MarkdownReporter::write(const ReportData& data, std::ostream& out) const {
  std::string text = "# ktune report\n\n";
  size_t listed = 0;
  for (const ReportRow& row : data.rows) listed += data.listed(row) ? 1 : 0;
  fmt::format_to(std::back_inserter(text),
                 "ktune {} · generated {} · {} measurements · {} runs · {} kernels\n\n",
                 markdown_cell(data.ktune_version), markdown_cell(data.generated_at), listed,
                 data.runs.size(), data.kernels.size());
  if (data.rows.empty()) text += "_No measurements match the filter._\n";
  if (!data.gpus.empty()) write_gpus(text, data);
  for (const std::string& kernel : data.kernels) write_kernel(text, data, kernel);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace ktune::reports
