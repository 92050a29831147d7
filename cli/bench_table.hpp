#pragma once
/// The rows `ktune bench` prints, one per timed thing (the config, then its baselines), side by side:
/// median, min, p90, samples, TFLOP/s, GB/s, % of the device's ceiling when it was calibrated, and
/// the speed-up over the baseline. Three renderings: a human table, one JSON document, and Google
/// Benchmark JSON (`--format gbench`, readable by benchmark's tools/compare.py).

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/candidate.hpp"

namespace ktune::cli {

/// One timed thing.
struct BenchRow {
  std::string role;      ///< "config" (what was asked for) or "baseline"
  std::string baseline;  ///< for a baseline: "default" or "cublas"; "" for the config
  measure::CandidateResult result;
  std::optional<double> pct_of_ceiling;  ///< 100 * roofline time / median, when the ceilings are known
  std::optional<double> speedup;         ///< baseline median / this median, when both were timed
};

/// Sets each row's speed-up against the first baseline row that was timed ok (the baseline itself
/// gets 1.0); leaves them empty when there is none.
void compute_speedups(std::vector<BenchRow>& rows);

/// What the rows were measured on and for (the header of every rendering).
struct BenchContext {
  std::string kernel;
  std::string shape;
  DType dtype = DType::kF32;
  std::string layout;
  std::string config_source;  ///< "--config", "--best" or "default"
  /// What the config is: "template" (a kernel template's config) or "cublaslt" (a cuBLASLt
  /// algorithm, which --best benches when the library won the key).
  std::string config_kind = "template";
  nlohmann::json config = nlohmann::json::object();
  nlohmann::json device = nlohmann::json::object();  ///< harness::to_json(DeviceInfo)
  nlohmann::json timing = nlohmann::json::object();  ///< measure::to_json(TimingOptions)
  nlohmann::json ceilings;                           ///< the GPU's calibrated ceilings, null when unknown
  nlohmann::json best;                               ///< --best: the cached winner's row, null otherwise
};

/// The human table (and, under a row, its CUPTI counters, Activity time and a note when sampling
/// stopped at a cap).
void print_bench_table(std::ostream& out, const BenchContext& context, const std::vector<BenchRow>& rows);

/// {"kernel","shape","dtype","layout","config_source","config_kind","config","device","timing","ceilings","best",
///  "results":[ measure::to_json(result) + {"role","baseline","pct_of_ceiling","speedup"} ]}.
nlohmann::json bench_json(const BenchContext& context, const std::vector<BenchRow>& rows);

/// Google Benchmark's JSON: one benchmark per timed row, named kernel/shape/dtype[/layout]/name,
/// real_time = cpu_time = the median in microseconds. `host` and `date` fill the context block.
nlohmann::json bench_gbench_json(const BenchContext& context, const std::vector<BenchRow>& rows,
                                 const std::string& host, const std::string& date);

}  // namespace ktune::cli
