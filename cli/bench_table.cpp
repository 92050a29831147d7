#include "cli/bench_table.hpp"

#include <ostream>
#include <thread>

#include <fmt/format.h>

namespace ktune::cli {
namespace {

std::string cell(const std::optional<double>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
}

std::optional<double> positive(double v) { return v > 0 ? std::optional(v) : std::nullopt; }

std::string row_name(const BenchRow& r) {
  if (r.baseline.empty() || r.result.name.starts_with(r.baseline)) return r.result.name;
  return fmt::format("{} [{}]", r.result.name, r.baseline);
}

}  // namespace

void compute_speedups(std::vector<BenchRow>& rows) {
  const BenchRow* base = nullptr;
  for (const BenchRow& r : rows) {
    if (r.role == "baseline" && r.result.outcome == ktune::Outcome::kOk && r.result.stats) {
      base = &r;
      break;
    }
  }
  const double base_us = base != nullptr ? base->result.stats->median : 0;
  for (BenchRow& r : rows) {
    r.speedup.reset();
    if (base_us > 0 && r.result.outcome == ktune::Outcome::kOk && r.result.stats &&
        r.result.stats->median > 0)
      r.speedup = base_us / r.result.stats->median;
  }
}

void print_bench_table(std::ostream& out, const BenchContext& c, const std::vector<BenchRow>& rows) {
  out << fmt::format("{} ({}), {} {} {}{}{}, config from {}{}\n", c.device.value("name", std::string("?")),
                     c.device.value("arch", std::string("?")), c.kernel, c.shape, to_string(c.dtype),
                     c.layout.empty() ? "" : " ", c.layout, c.config_source,
                     c.config_kind == "template" ? "" : " (a " + c.config_kind + " algorithm)");
  if (c.ceilings.is_null())
    out << "(no calibrated ceilings for this GPU: run `ktune devices --calibrate` for % of ceiling)\n";
  out << fmt::format("{:<52} {:<9} {:>10} {:>10} {:>10} {:>7} {:>8} {:>8} {:>6} {:>8}\n", "config", "outcome",
                     "median us", "min us", "p90 us", "samples", "TFLOP/s", "GB/s", "% ceil", "speed-up");
  for (const BenchRow& r : rows) {
    const measure::CandidateResult& x = r.result;
    if (!x.stats) {
      out << fmt::format("{:<52} {:<9} {}\n", row_name(r), ktune::to_string(x.outcome), x.reason);
      continue;
    }
    const measure::SampleStats& s = *x.stats;
    out << fmt::format("{:<52} {:<9} {:>10.3f} {:>10.3f} {:>10.3f} {:>7} {:>8} {:>8} {:>6} {:>8}\n",
                       row_name(r), ktune::to_string(x.outcome), s.median, s.min, s.p90, s.samples,
                       cell(positive(x.tflops), "{:.2f}"), cell(positive(x.gbps), "{:.1f}"),
                       cell(r.pct_of_ceiling, "{:.1f}"), cell(r.speedup, "{:.3f}x"));
    if (x.activity_median_us) {
      out << fmt::format("  CUPTI Activity median {:.3f} us ({:+.2f} % vs events)\n", *x.activity_median_us,
                         100 * (*x.activity_median_us / s.median - 1));
    }
    if (x.counters.value("available", false) && x.counters.contains("metrics")) {
      for (const auto& [k, v] : x.counters.at("metrics").items())
        out << fmt::format("  {:<52} {}\n", k, v.dump());
    } else if (x.counters.contains("reason") && x.counters.at("reason").is_string()) {
      const std::string why = x.counters.at("reason").get<std::string>();
      if (why != "not requested" && r.baseline != "cublas") out << "  counters unavailable: " << why << "\n";
    }
    if (!x.stop_reason.empty() && x.stop_reason != "converged")
      out << fmt::format("  stopped at the {} (drift {:+.2f} %)\n", x.stop_reason, 100 * x.drift);
    if (x.resources.contains("algorithm") && x.resources.at("algorithm").is_string())
      out << fmt::format("  {} {}\n", x.resources.value("library", std::string("cuBLASLt")),
                         x.resources.at("algorithm").get<std::string>());
  }
}

nlohmann::json bench_json(const BenchContext& c, const std::vector<BenchRow>& rows) {
  nlohmann::json doc{{"kernel", c.kernel},
                     {"shape", c.shape},
                     {"dtype", to_string(c.dtype)},
                     {"layout", c.layout},
                     {"config_source", c.config_source},
                     {"config_kind", c.config_kind},
                     {"config", c.config},
                     {"device", c.device},
                     {"timing", c.timing},
                     {"ceilings", c.ceilings},
                     {"best", c.best},
                     {"results", nlohmann::json::array()}};
  for (const BenchRow& r : rows) {
    nlohmann::json j = measure::to_json(r.result);
    j["role"] = r.role;
    j["baseline"] = r.baseline;
    j["pct_of_ceiling"] = r.pct_of_ceiling ? nlohmann::json(*r.pct_of_ceiling) : nlohmann::json();
    j["speedup"] = r.speedup ? nlohmann::json(*r.speedup) : nlohmann::json();
    doc["results"].push_back(std::move(j));
  }
  return doc;
}

nlohmann::json bench_gbench_json(const BenchContext& c, const std::vector<BenchRow>& rows,
                                 const std::string& host, const std::string& date) {
  nlohmann::json doc;
  doc["context"] = {{"date", date},
                    {"host_name", host},
                    {"executable", "ktune bench"},
                    {"num_cpus", std::thread::hardware_concurrency()},
                    {"mhz_per_cpu", 0},
                    {"cpu_scaling_enabled", false},
                    {"caches", nlohmann::json::array()},
                    {"library_build_type", "release"},
                    {"ktune_device", c.device.value("name", std::string())},
                    {"ktune_arch", c.device.value("arch", std::string())}};
  doc["benchmarks"] = nlohmann::json::array();
  for (const BenchRow& r : rows) {
    if (!r.result.stats) continue;  // compare.py has no place for a failed run; --json keeps it
    const std::string name = fmt::format("{}/{}/{}{}{}/{}", c.kernel, c.shape, to_string(c.dtype),
                                         c.layout.empty() ? "" : "/", c.layout, r.result.name);
    nlohmann::json b{{"name", name},
                     {"run_name", name},
                     {"run_type", "iteration"},
                     {"repetitions", 1},
                     {"repetition_index", 0},
                     {"threads", 1},
                     {"iterations", r.result.stats->samples},
                     {"real_time", r.result.stats->median},
                     {"cpu_time", r.result.stats->median},
                     {"time_unit", "us"},
                     {"min_us", r.result.stats->min},
                     {"p90_us", r.result.stats->p90},
                     {"rse_median", r.result.stats->rse_median}};
    if (r.result.gbps > 0) b["bytes_per_second"] = r.result.gbps * 1e9;
    if (r.result.tflops > 0) b["flops_per_second"] = r.result.tflops * 1e12;
    if (r.speedup) b["speedup_vs_baseline"] = *r.speedup;
    doc["benchmarks"].push_back(std::move(b));
  }
  return doc;
}

}  // namespace ktune::cli
