/// `ktune bench`: times one kernel at one config (given, the cached winner, or the default) and its
/// baselines (the default config, or cuBLASLt for gemm) with the full protocol — the config in the
/// worker process (verification, warm-up, flush, events/graph batches, stopping rule, NVML, and
/// optionally CUPTI counters and the Activity timer), cuBLASLt in this process with the same
/// TimingOptions — and prints the rows side by side as a table, JSON, or Google Benchmark JSON.
///
/// Order of checks: flags, kernel, shape, dtype, layout, config and baseline first (exit 2), then
/// the GPU (exit 3), then the database for --best (exit 4).

#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "cli/bench_request.hpp"
#include "cli/bench_table.hpp"
#include "cli/bench_target.hpp"
#include "cli/commands.hpp"
#include "cli/db_option.hpp"
#include "cli/kernel_dir_option.hpp"
#include "cli/output.hpp"
#include "cli/timing_flags.hpp"
#include "harness/cublaslt_algorithm.hpp"
#include "harness/device_info.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "kernel_templates/user_kernel/user_kernels.hpp"
#include "ktune/error.hpp"
#include "measure/candidate_runner.hpp"
#include "measure/copy_kernel.hpp"
#include "reports/roofline.hpp"
#include "tuner/library/baseline_measurement.hpp"
#include "tuner/library/cublas_baseline_measurer.hpp"

namespace ktune::cli {
namespace {

namespace kt = kernel_templates;

struct BenchArgs {
  std::string kernel;
  std::string shape;
  std::string dtype = "f32";
  std::string layout;
  std::optional<std::string> config;
  bool best = false;
  std::string baseline = "none";
  std::string format = "table";
  bool json = false;
  bool no_verify = false;
  int device = 0;
  std::string db;
  TimingFlags timing;
};

/// What is timed in the worker: a ready request, or a result already decided (a compile error).
struct Planned {
  BenchRow row;
  std::optional<measure::CandidateRequest> request;
};

Planned plan_template(const BenchTarget& target, const BenchConfig& config, const std::string& arch,
                      const measure::TimingOptions& timing, int device, bool verify,
                      harness::NvrtcCompiler& compiler, const kt::SourceLibrary& sources) {
  Planned p;
  p.row.result.name = config.name;
  try {
    p.request = make_bench_request(target, config, arch, timing, device, verify, compiler, sources);
  } catch (const Error& e) {
    // Only a compile error is the config's own failure (a row); NVRTC missing is exit 3.
    if (e.api_code() != "NVRTC_ERROR_COMPILATION") throw;
    p.row.result.outcome = ktune::Outcome::kCompileError;
    p.row.result.reason = e.what() + (e.detail().empty() ? std::string() : "\n" + e.detail());
  }
  return p;
}

Planned plan_copy(const BenchTarget& target, const measure::CopyConfig& config, const std::string& arch,
                  const measure::TimingOptions& timing, int device, bool verify) {
  Planned p;
  measure::CandidateRequest r = measure::make_copy_request(
      static_cast<uint64_t>(target.problem.dim("n")), target.problem.dtype, config, arch, timing, device);
  if (!verify) r.checks.clear();
  p.row.result.name = r.name;
  p.request = std::move(r);
  return p;
}

measure::CopyConfig parse_copy_config(const std::string& text) {
  try {
    return measure::CopyConfig::from_json(nlohmann::json::parse(text));
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::kBadInput, fmt::format("--config is not JSON ({}): {}", text, e.what()));
  }
}

/// The GPU's calibrated ceilings from the database, or null (no database, GPU not calibrated).
nlohmann::json stored_ceilings(const std::string& db_flag, const harness::DeviceInfo& dev) {
  try {
    const auto path = db_path(db_flag);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return nullptr;
    const auto db = cache::ConfigCache::open(path, cache::ConfigCache::Mode::kReadOnly);
    for (const cache::GpuInfo& g : db.gpus()) {
      if (g.name != dev.name || g.cc_major != dev.cc_major || g.sm_count != dev.sm_count) continue;
      auto j = nlohmann::json::parse(g.ceilings_json, nullptr, false);
      if (j.is_object() && !j.empty()) return j;
    }
  } catch (const std::exception& e) {
    std::cerr << "note: ceilings not read from the database: " << e.what() << "\n";
  }
  return nullptr;
}

void add_percent_of_ceiling(std::vector<BenchRow>& rows, const nlohmann::json& ceilings, DType dtype) {
  if (ceilings.is_null()) return;
  const reports::Ceilings c = reports::ceilings_for(ceilings.dump(), dtype);
  for (BenchRow& r : rows) {
    if (!r.result.stats || r.result.stats->median <= 0) continue;
    const double us = r.result.stats->median;
    reports::Work work;
    if (r.result.tflops > 0) work.flops = r.result.tflops * 1e12 * us * 1e-6;
    if (r.result.gbps > 0) work.bytes = r.result.gbps * 1e9 * us * 1e-6;
    r.pct_of_ceiling = reports::roofline(work, c, us).pct_of_ceiling;
  }
}

void print(const BenchArgs& a, const BenchContext& context, const std::vector<BenchRow>& rows) {
  if (a.format == "json") {
    print_json(bench_json(context, rows));
  } else if (a.format == "gbench") {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    char date[64] = {};
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S+00:00", std::gmtime(&now));
    print_json(bench_gbench_json(context, rows, host, date));
  } else {
    print_bench_table(std::cout, context, rows);
  }
}

void run_bench(BenchArgs& a) {
  if (a.json) a.format = "json";
  if (a.best && a.config) throw Error(ErrorKind::kBadInput, "--config and --best exclude each other");
  const measure::TimingOptions timing = finish_timing_options(a.timing);
  const BenchTarget target = parse_bench_target(a.kernel, a.shape, a.dtype, a.layout);
  const bool copy = target.kernel->name == "copy";
  const bool verify = !a.no_verify;
  if (const auto* user = kernel_templates::find_user_kernel(target.kernel->name); user && !user->verifies()) {
    std::cerr << "note: " << user->description().toml_path.string()
              << " says verify = false: the results are unverified\n";
  }
  if (a.baseline == "cublas") {
    if (auto why = tuner::no_cublas_baseline(target.kernel->name, target.problem))
      throw Error(ErrorKind::kBadInput, *why);
  }

  // Everything that needs no GPU: the config (unless it comes from the database) and the baseline's.
  std::optional<BenchConfig> config;
  std::optional<ktune::Config> library;  // --best, when a library algorithm won the key
  std::optional<BenchConfig> default_config;
  measure::CopyConfig copy_config;
  if (copy) {
    measure::check_copy_size(static_cast<uint64_t>(target.problem.dim("n")), target.problem.dtype);
    if (a.config) copy_config = parse_copy_config(*a.config);
  } else {
    if (!a.best) config = a.config ? parse_bench_config(target, *a.config) : default_bench_config(target);
    if (a.baseline == "default") default_config = default_bench_config(target);
  }

  const harness::DeviceInfo dev = harness::query_device(a.device);  // no GPU: exit 3
  BenchContext context;
  context.kernel = target.kernel->name;
  context.shape = target.shape;
  context.dtype = target.problem.dtype;
  context.layout = target.problem.layout;
  context.config_source = a.best ? "--best" : a.config ? "--config" : "default";
  context.device = harness::to_json(dev);
  context.timing = measure::to_json(timing);
  if (a.best) {
    const auto path = db_path(a.db);
    const auto db = open_existing(path);  // missing: exit 4
    const cache::Lookup lookup{dev.name,     target.kernel->name,  target.shape, target.problem.dtype,
                               std::nullopt, target.problem.layout};
    const auto best = db.best(lookup, false);
    if (!best) {
      throw Error(
          ErrorKind::kNotFound,
          fmt::format("no tuned config for {} {} {} layout '{}' on {} in {}; run `ktune tune --kernel {} "
                      "--shape {} --dtype {}` first",
                      target.kernel->name, target.shape, to_string(target.problem.dtype),
                      target.problem.layout, dev.name, path.string(), target.kernel->name, target.shape,
                      to_string(target.problem.dtype)));
    }
    context.best = nlohmann::json::parse(best->to_json());
    const auto stored = nlohmann::json::parse(best->config_json);
    if (copy) {
      copy_config = measure::CopyConfig::from_json(stored);
    } else if (const ktune::Config winner = ktune::Config::from_json(stored);
               harness::is_cublaslt_config(winner)) {
      library = winner;
      context.config_kind = std::string(harness::CublasLtAlgorithm::kVariant);
    } else {
      config = check_bench_config(target, winner);
    }
  }
  for (const std::optional<BenchConfig>* c : {&config, &default_config})
    if (*c) require_bench_arch(**c, dev.arch(), dev.name);  // exit 2 with the template's reason
  context.config = copy      ? copy_config.to_json()
                   : library ? nlohmann::json(library->to_json())
                             : nlohmann::json(config->config.to_json());
  context.ceilings = stored_ceilings(a.db, dev);

  // The rows timed in the worker: the config, then the default-config baseline.
  std::vector<Planned> planned;
  if (copy) {
    planned.push_back(plan_copy(target, copy_config, dev.arch(), timing, a.device, verify));
    if (a.baseline == "default")
      planned.push_back(plan_copy(target, {}, dev.arch(), timing, a.device, verify));
  } else {
    harness::NvrtcCompiler compiler;
    const kt::SourceLibrary sources = kt::SourceLibrary::from_environment();
    if (library) {
      Planned p;
      p.request = make_library_bench_request(target, *library, dev.arch(), timing, a.device, verify, compiler,
                                             sources);
      p.row.result.name = p.request->name;
      planned.push_back(std::move(p));
    } else {
      planned.push_back(
          plan_template(target, *config, dev.arch(), timing, a.device, verify, compiler, sources));
    }
    if (default_config) {
      planned.push_back(
          plan_template(target, *default_config, dev.arch(), timing, a.device, verify, compiler, sources));
    }
  }
  if (planned.size() > 1) {
    planned.back().row.role = "baseline";
    planned.back().row.baseline = "default";
  }
  planned.front().row.role = "config";

  std::vector<BenchRow> rows;
  measure::RunnerOptions ro;
  ro.worker_command = measure::default_worker_command();
  ro.worker_command.insert(ro.worker_command.end(), {"--device", std::to_string(a.device)});
  measure::CandidateRunner runner(ro);
  uint64_t id = 0;
  for (Planned& p : planned) {
    if (p.request) {
      p.request->id = ++id;
      p.row.result = runner.run(*p.request);
    }
    rows.push_back(std::move(p.row));
  }
  runner.shutdown();
  if (a.baseline == "cublas") {
    tuner::CublasBaselineMeasurer blas(a.device);
    BenchRow row;
    row.role = "baseline";
    row.baseline = std::string(tuner::kCublasBaseline);
    row.result = blas.measure_cublas(target.problem, timing, verify);
    rows.push_back(std::move(row));
  }

  compute_speedups(rows);
  add_percent_of_ceiling(rows, context.ceilings, target.problem.dtype);
  print(a, context, rows);
  for (const BenchRow& r : rows) {
    if (r.result.outcome != ktune::Outcome::kOk) {
      throw Error(ErrorKind::kRuntime, fmt::format("{}: {}: {}", r.result.name,
                                                   ktune::to_string(r.result.outcome), r.result.reason));
    }
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand(
      "bench",
      "Time one kernel at one config (given, the cached winner or the default) against its baselines");
  cmd->add_option("--kernel", a->kernel, "Kernel: " + kt::known_kernel_names())->required();
  cmd->add_option("--shape", a->shape, "Problem shape in the kernel's dimensions, e.g. m=128,n=4096,k=4096")
      ->required();
  cmd->add_option("--dtype", a->dtype, "Element type: f32, f16, bf16 (copy also fp8e4m3, fp8e5m2)")
      ->capture_default_str();
  cmd->add_option("--layout", a->layout,
                  "Layout or mode (gemm: nt, nn, nt+bias, ...); default: the kernel's");
  auto* config =
      cmd->add_option("--config", a->config,
                      "Config as JSON: {\"template\":\"mma\",\"params\":{\"BLOCK_M\":128,...}} or flat "
                      "{\"template\":\"mma\",\"BLOCK_M\":128}; left-out parameters take the default");
  cmd->add_flag("--best", a->best,
                "Time the cached winner for this GPU (--db): a template's config or the cuBLASLt algorithm "
                "that won the key; none: exit 4")
      ->excludes(config);
  cmd->add_option(
         "--baseline", a->baseline,
         "Also time a baseline: cublas (gemm: cuBLASLt in this process), default (the default config), none")
      ->check(CLI::IsMember({"none", "default", "cublas"}))
      ->capture_default_str();
  cmd->add_flag("--no-verify", a->no_verify, "Time without checking the output against the reference");
  cmd->add_option("--device", a->device, "CUDA device ordinal")->capture_default_str();
  add_kernel_dir_option(*cmd);
  add_db_option(*cmd, a->db);
  cmd->add_option("--format", a->format, "table, json or gbench (Google Benchmark JSON)")
      ->check(CLI::IsMember({"table", "json", "gbench"}))
      ->capture_default_str();
  add_json_flag(*cmd, a->json);
  add_timing_flags(*cmd, a->timing);
  cmd->footer(
      "Examples:\n"
      "  ktune bench --kernel gemm --shape m=128,n=4096,k=4096 --dtype bf16 --baseline cublas\n"
      "  ktune bench --kernel gemm --shape m=16,n=4096,k=4096 --dtype bf16 --best --baseline cublas --json\n"
      "  ktune bench --kernel gemm --shape m=512,n=4096,k=4096 --dtype bf16 --layout nn \\\n"
      "      --config '{\"template\":\"mma\",\"params\":{\"BLOCK_M\":128,\"BLOCK_N\":128}}' --baseline "
      "default\n"
      "  ktune bench --kernel rmsnorm --shape rows=16,hidden=4096 --dtype bf16 --baseline default\n"
      "  ktune bench --kernel copy --shape n=67108864 --format gbench > copy.json   # for compare.py\n"
      "Exit codes: 2 bad kernel/shape/config/baseline, 3 no GPU, 4 --best found nothing, 1 a row failed.");
  cmd->callback([a] { run_bench(*a); });
}

}  // namespace ktune::cli
