/// `ktune report`: CSV, JSON, HTML or Markdown over the database (reports/, docs/reports.md).

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/db_option.hpp"
#include "cli/gpu_choice.hpp"
#include "cli/kernel_dir_option.hpp"
#include "core/dtype.hpp"
#include "ktune/error.hpp"
#include "reports/report_loader.hpp"
#include "reports/reporter.hpp"

namespace ktune::cli {
namespace {

struct ReportOptions {
  std::string db;
  std::string format;
  std::string out;
  std::string kernel;
  std::string gpu;
  std::string dtype;
  std::optional<int64_t> run;
  bool winners = false;
};

void run_report(const ReportOptions& o) {
  const reports::FormatEntry format = reports::find_format(o.format);
  reports::ReporterOptions writer;
  if (const char* chart_js = std::getenv("KTUNE_CHART_JS"); chart_js != nullptr && *chart_js != '\0') {
    writer.chart_js = chart_js;
  }
  const cache::ConfigCache db = open_existing(db_path(o.db));
  reports::ReportQuery query;
  query.filter.gpu_name = o.gpu.empty() ? o.gpu : match_gpu_name(db, o.gpu);
  query.filter.kernel = o.kernel;
  if (const auto kernels = db.kernel_names();
      !o.kernel.empty() && !kernels.empty() &&
      std::find(kernels.begin(), kernels.end(), o.kernel) == kernels.end()) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("--kernel {}: the database {} holds no such kernel; it holds {}", o.kernel,
                            db.path().string(), quoted_list(kernels)));
  }
  query.filter.dtype = dtype_filter_from_string(o.dtype);
  query.filter.run_id = o.run;
  query.winners_only = o.winners;
  const reports::ReportData data = reports::load_report_data(db, query);
  if (o.out == "-") {
    format.make(writer)->write(data, std::cout);
    std::cout.flush();
    if (!std::cout) throw Error(ErrorKind::kRuntime, "cannot write the report to stdout");
  } else {
    reports::write_report_file(data, format.name, o.out, writer);
  }
  size_t winners = 0;
  for (const reports::ReportKey& key : data.keys) winners += key.winner ? 1 : 0;
  if (data.rows.empty()) std::cerr << "note: no measurements match the filter; the report is empty\n";
  std::cerr << fmt::format(
      "wrote {} report to {}: {} measurements, {} winners, {} kernels, {} GPUs, {} runs\n", format.name,
      o.out == "-" ? "stdout" : o.out, data.rows.size(), winners, data.kernels.size(), data.gpus.size(),
      data.runs.size());
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto opts = std::make_shared<ReportOptions>();
  auto* cmd = app.add_subcommand("report", "Write a CSV, JSON, HTML or Markdown report of the database");
  add_kernel_dir_option(*cmd);
  add_db_option(*cmd, opts->db);
  std::string format_help = "Report format, e.g. --format html:";
  for (const auto& f : reports::formats()) format_help += fmt::format("\n  {}: {}", f.name, f.help);
  cmd->add_option("--format", opts->format, format_help)
      ->required()
      ->type_name("FORMAT")
      ->check(CLI::IsMember(reports::format_choices()));
  cmd->add_option("--out", opts->out, "Output file, e.g. --out report.html ('-' for stdout)")
      ->required()
      ->type_name("FILE");
  cmd->add_option("--kernel", opts->kernel, "Only this kernel, e.g. --kernel gemm")->type_name("NAME");
  cmd->add_option("--gpu", opts->gpu, "Only this GPU model, e.g. --gpu \"NVIDIA H200\"")->type_name("NAME");
  cmd->add_option("--dtype", opts->dtype, "Only this dtype, e.g. --dtype bf16")->type_name("DTYPE");
  cmd->add_option("--run", opts->run, "Only the measurements of this run id, e.g. --run 3")
      ->type_name("ID")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--winners", opts->winners, "List only the best config per (GPU, kernel, shape, dtype)");
  cmd->footer(
      "Examples:\n"
      "  ktune report --format html --out report.html\n"
      "  ktune report --format csv --out gemm.csv --kernel gemm --dtype bf16 --winners\n"
      "  ktune report --format md --out - --gpu \"NVIDIA H200\"\n"
      "HTML reports inline Chart.js from /usr/share/javascript/chart.js/chart.min.js (libjs-chart.js;\n"
      "$KTUNE_CHART_JS overrides the path) and open offline. Exit codes: 0 written, 1 write failure,\n"
      "2 bad option or database, 4 no database.");
  cmd->callback([opts] { run_report(*opts); });
}

}  // namespace ktune::cli
