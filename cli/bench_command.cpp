/// `ktune bench`: times one kernel at one config (and its baseline) with the full protocol —
/// worker process, verification, warm-up, flush, events/graph batches, stopping rule, NVML, and
/// optionally CUPTI counters and the Activity timer — and prints a table, JSON, or Google
/// Benchmark JSON (`--format gbench`, readable by benchmark's compare.py).

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cache/shape.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/timing_flags.hpp"
#include "harness/candidate_runner.hpp"
#include "harness/copy_kernel.hpp"
#include "harness/device_info.hpp"
#include "ktune/error.hpp"

namespace ktune::cli {
namespace {

struct BenchArgs {
  std::string kernel;
  std::string shape;
  std::string dtype = "f32";
  std::string config = "{}";
  std::string baseline = "none";
  std::string format = "table";
  bool json = false;
  int device = 0;
  TimingFlags timing;
};

std::string fmt_opt(const std::optional<double>& v, const char* f) {
  return v ? fmt::format(fmt::runtime(f), *v) : std::string("unknown");
}

void print_table(std::ostream& out, const harness::DeviceInfo& dev, const std::string& shape,
                 const std::vector<harness::CandidateResult>& results) {
  out << fmt::format("{} ({}), shape {}\n", dev.name, dev.arch(), shape);
  out << fmt::format("{:<26} {:<9} {:>11} {:>11} {:>11} {:>7} {:>7} {:>6} {:>9} {:>9} {:>6}\n", "config",
                     "outcome", "median us", "min us", "p90 us", "rse %", "samples", "batch", "GB/s",
                     "SM MHz", "temp C");
  for (const auto& r : results) {
    if (!r.stats) {
      out << fmt::format("{:<26} {:<9} {}\n", r.name, harness::to_string(r.outcome), r.reason);
      continue;
    }
    const auto& s = *r.stats;
    out << fmt::format(
        "{:<26} {:<9} {:>11.3f} {:>11.3f} {:>11.3f} {:>7.3f} {:>7} {:>6} {:>9.1f} {:>9} {:>6}\n", r.name,
        harness::to_string(r.outcome), s.median, s.min, s.p90, 100 * s.rse_median, s.samples,
        r.launches_per_sample, r.gbps, fmt_opt(r.sm_clock_mhz, "{:.0f}"), fmt_opt(r.temperature_c, "{:.0f}"));
    if (r.activity_median_us) {
      out << fmt::format("  CUPTI Activity median {:.3f} us ({:+.2f} % vs events)\n", *r.activity_median_us,
                         100 * (*r.activity_median_us / s.median - 1));
    }
    if (r.counters.value("available", false)) {
      for (const auto& [k, v] : r.counters.at("metrics").items())
        out << fmt::format("  {:<52} {}\n", k, v.dump());
    } else if (r.counters.contains("reason") && r.counters.at("reason") != "not requested") {
      out << "  counters unavailable: " << r.counters.at("reason").get<std::string>() << "\n";
    }
    if (r.stop_reason != "converged")
      out << fmt::format("  stopped at the {} (drift {:+.2f} %)\n", r.stop_reason, 100 * r.drift);
  }
}

nlohmann::json gbench_document(const harness::DeviceInfo& dev, const BenchArgs& a,
                               const std::vector<harness::CandidateResult>& results) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  char date[64] = {};
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S+00:00", std::gmtime(&now));
  nlohmann::json doc;
  doc["context"] = {{"date", date},
                    {"host_name", host},
                    {"executable", "ktune bench"},
                    {"num_cpus", std::thread::hardware_concurrency()},
                    {"mhz_per_cpu", 0},
                    {"cpu_scaling_enabled", false},
                    {"caches", nlohmann::json::array()},
                    {"library_build_type", "release"},
                    {"ktune_device", dev.name},
                    {"ktune_arch", dev.arch()}};
  doc["benchmarks"] = nlohmann::json::array();
  for (const auto& r : results) {
    if (!r.stats) continue;  // compare.py has no place for a failed run; --json keeps it
    const std::string name = fmt::format("{}/{}/{}/{}", a.kernel, a.shape, a.dtype, r.name);
    nlohmann::json b{{"name", name},
                     {"run_name", name},
                     {"run_type", "iteration"},
                     {"repetitions", 1},
                     {"repetition_index", 0},
                     {"threads", 1},
                     {"iterations", r.stats->samples},
                     {"real_time", r.stats->median},
                     {"cpu_time", r.stats->median},
                     {"time_unit", "us"},
                     {"min_us", r.stats->min},
                     {"p90_us", r.stats->p90},
                     {"rse_median", r.stats->rse_median}};
    if (r.gbps > 0) b["bytes_per_second"] = r.gbps * 1e9;
    doc["benchmarks"].push_back(std::move(b));
  }
  return doc;
}

void run_bench(BenchArgs& a) {
  if (a.json) a.format = "json";
  const harness::TimingOptions timing = finish_timing_options(a.timing);
  if (a.kernel != "copy") {
    throw Error(ErrorKind::kBadInput,
                fmt::format("ktune bench knows the built-in kernel 'copy'; '{}' is not one of its kernels",
                            a.kernel));
  }
  const auto shape = cache::Shape::parse(a.shape).normalized(std::vector<std::string>{"n"});
  const harness::DType dtype = harness::dtype_from_string(a.dtype);
  nlohmann::json config_json;
  try {
    config_json = nlohmann::json::parse(a.config);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::kBadInput, fmt::format("--config is not JSON: {}", e.what()));
  }
  const harness::CopyConfig config = harness::CopyConfig::from_json(config_json);
  const auto n = static_cast<uint64_t>(shape.at("n"));
  harness::check_copy_size(n, dtype);
  const harness::DeviceInfo dev = harness::query_device(a.device);

  std::vector<harness::CandidateRequest> requests;
  requests.push_back(harness::make_copy_request(n, dtype, config, dev.arch(), timing, a.device));
  if (a.baseline == "default") {
    requests.push_back(
        harness::make_copy_request(n, dtype, harness::CopyConfig{}, dev.arch(), timing, a.device));
  }
  harness::RunnerOptions ro;
  ro.worker_command = harness::default_worker_command();
  ro.worker_command.insert(ro.worker_command.end(), {"--device", std::to_string(a.device)});
  harness::CandidateRunner runner(ro);
  std::vector<harness::CandidateResult> results;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    requests[i].id = i;
    results.push_back(runner.run(requests[i]));
    if (i > 0) results.back().name += " (baseline)";
  }
  runner.shutdown();

  if (a.format == "json") {
    nlohmann::json doc{{"kernel", a.kernel},
                       {"shape", shape.canonical()},
                       {"dtype", a.dtype},
                       {"config", config.to_json()},
                       {"device", harness::to_json(dev)},
                       {"timing", harness::to_json(timing)},
                       {"results", nlohmann::json::array()}};
    for (const auto& r : results) doc["results"].push_back(harness::to_json(r));
    print_json(doc);
  } else if (a.format == "gbench") {
    print_json(gbench_document(dev, a, results));
  } else {
    print_table(std::cout, dev, shape.canonical(), results);
  }
  const auto& main = results.front();
  if (main.outcome != harness::Outcome::kOk) {
    throw Error(ErrorKind::kRuntime,
                fmt::format("{}: {}: {}", main.name, harness::to_string(main.outcome), main.reason));
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Time one kernel at one config with the full measurement protocol");
  cmd->add_option("--kernel", a->kernel, "Kernel name (built-in: copy)")->required();
  cmd->add_option("--shape", a->shape, "Problem shape, e.g. n=268435456")->required();
  cmd->add_option("--dtype", a->dtype, "Element type: f32, f16, bf16, fp8e4m3, fp8e5m2")
      ->capture_default_str();
  cmd->add_option("--config", a->config, "Config as JSON, e.g. '{\"unroll\":8,\"block\":512}'")
      ->capture_default_str();
  cmd->add_option("--baseline", a->baseline, "Also time a baseline: none or default (the default config)")
      ->check(CLI::IsMember({"none", "default"}))
      ->capture_default_str();
  cmd->add_option("--device", a->device, "CUDA device ordinal")->capture_default_str();
  cmd->add_option("--format", a->format, "table, json or gbench (Google Benchmark JSON)")
      ->check(CLI::IsMember({"table", "json", "gbench"}))
      ->capture_default_str();
  add_json_flag(*cmd, a->json);
  add_timing_flags(*cmd, a->timing);
  cmd->footer(
      "Examples:\n"
      "  ktune bench --kernel copy --shape n=268435456 --dtype f32\n"
      "  ktune bench --kernel copy --shape n=1048576 --config '{\"unroll\":8}' --baseline default --json\n"
      "  ktune bench --kernel copy --shape n=67108864 --format gbench > copy.json   # for compare.py\n"
      "  ktune bench --kernel copy --shape n=536870912 --counters --activity-timer");
  cmd->callback([a] { run_bench(*a); });
}

}  // namespace ktune::cli
