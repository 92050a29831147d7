#include "report_fixture.hpp"

#include <map>
#include <random>

#include <fmt/format.h>

#include "reports/report_builder.hpp"

namespace ktune::reports::testing {
namespace {

struct KernelPlan {
  std::string name;
  std::vector<std::string> dims;
  DType dtype;
  std::vector<std::string> baselines;
};

}  // namespace

Fixture make_fixture(const FixtureOptions& o) {
  std::mt19937_64 rng(o.seed);
  const auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  const auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  const std::string evil =
      o.hostile ? std::string(" ") + kHostileMarkup + " & \"q\" 'a', \xE2\x80\xA8 Ωμέγα 卡" : "";

  std::vector<cache::GpuInfo> gpus;
  gpus.push_back(
      {.name = "NVIDIA H200" + evil,
       .cc_major = 9,
       .cc_minor = 0,
       .sm_count = 132,
       .memory_bytes = 150'754'820'096,
       .ceilings_json = fmt::format(R"({{"copy_gbps":{:.1f},"bf16_tflops":{:.1f},"f16_tflops":{:.1f}}})",
                                    uniform(3800, 4300), uniform(650, 760), uniform(650, 760))});
  if (o.two_gpus) {
    gpus.push_back({.name = "NVIDIA L4",
                    .cc_major = 8,
                    .cc_minor = 9,
                    .sm_count = 58,
                    .memory_bytes = 24'000'000'000,
                    .ceilings_json = "{}"});
  }
  std::vector<KernelPlan> kernels = {{"gemm", {"m", "n", "k"}, DType::kBF16, {"cublas", "default"}},
                                     {"copy", {"n"}, DType::kF32, {"default"}},
                                     {"softmax", {"rows", "cols"}, DType::kF16, {}}};
  if (o.hostile)
    kernels.push_back({"gemm" + evil + "</script><script>document.title='PWNED'</script>",
                       {"m"},
                       DType::kBF16,
                       {"default"}});

  Fixture f;
  const int runs = 2;
  for (int r = 1; r <= runs; ++r) {
    f.runs.emplace_back(r, cache::RunInfo{.started_at = fmt::format("2025-01-0{}T10:00:00Z", r),
                                          .host = "node" + std::to_string(r) + evil,
                                          .ktune_version = "0.1.0",
                                          .arguments = "ktune tune --preset quick" + evil,
                                          .driver_version = "580.65",
                                          .cuda_version = "13.0"});
  }
  int64_t id = 0;
  static constexpr std::array<int, 5> kTiles{32, 64, 128, 192, 256};
  for (const cache::GpuInfo& gpu : gpus) {
    for (const KernelPlan& k : kernels) {
      for (int s = 0; s < o.shapes_per_kernel; ++s) {
        std::string shape;
        std::map<std::string, double> dim;
        for (const std::string& d :
             k.dims) {  // the first dimension differs between shapes: keys are distinct
          const int value = shape.empty() ? 16 * (s + 1) : 16 << pick(9);
          shape += fmt::format("{}{}={}", shape.empty() ? "" : ",", d, value);
          dim[d] = value;
        }
        // The work the tuner stores with each row (from the kernel's spec); softmax is left without.
        cache::Work work;
        if (k.name == "gemm") {  // bf16: A m x k and B n x k read, C m x n written
          work.flops = 2 * dim["m"] * dim["n"] * dim["k"];
          work.bytes = (dim["m"] * dim["k"] + dim["n"] * dim["k"] + dim["m"] * dim["n"]) * 2;
        } else if (k.name == "copy") {  // f32: n read, n written
          work.bytes = 2 * dim["n"] * 4;
        }
        const double base_us = uniform(5, 2000);
        int64_t best = 0;
        int ok_count = 0;
        for (int c = 0; c < o.configs_per_shape + static_cast<int>(k.baselines.size()); ++c) {
          const bool is_baseline = c >= o.configs_per_shape;
          cache::StoredMeasurement sm;
          sm.id = ++id;
          sm.run_id = 1 + pick(runs);
          sm.run_started_at = f.runs[static_cast<size_t>(sm.run_id - 1)].second.started_at;
          sm.gpu = gpu;
          sm.kernel = {k.name, "hash" + std::to_string(k.name.size())};
          sm.measured_at = "2025-01-01T10:00:01Z";
          sm.m.shape = shape;
          sm.m.dtype = k.dtype;
          sm.m.work = work;
          const int bm = kTiles[static_cast<size_t>(pick(5))];
          const int bn = kTiles[static_cast<size_t>(pick(5))];
          const int stages = 2 + pick(3);
          if (is_baseline) {
            sm.m.baseline = k.baselines[static_cast<size_t>(c - o.configs_per_shape)];
            sm.m.config_name = sm.m.baseline;
          } else {
            sm.m.config_name = fmt::format("{}.{}.{}x{}.s{}{}", k.name, to_string(k.dtype), bm, bn, stages,
                                           o.hostile ? evil : "");
            sm.m.config_json =
                fmt::format(R"({{"bm":{},"bn":{},"stages":{},"swizzle":"{}"{}}})", bm, bn, stages,
                            pick(2) ? "row" : "col",
                            o.hostile ? R"(,"x<svg onload=alert(1)>\"":"<b>&amp;\u2028</b>")" : "");
          }
          const int roll = pick(10);
          if (!is_baseline && roll == 0) {
            sm.m.outcome = ktune::Outcome::kCompileError;
            sm.m.reason = "ptxas error: too many resources, \"quoted\"\nsecond line" + evil;
          } else if (!is_baseline && roll == 1) {
            sm.m.outcome = ktune::Outcome::kIncorrect;
            sm.m.reason = fmt::format("max rel err {:.3g} > 0.02", uniform(0.05, 2));
          } else {
            const double median = base_us * uniform(1.0, 6.0);
            sm.m.stats = cache::Stats{.median_us = median,
                                      .min_us = median * uniform(0.9, 1.0),
                                      .mean_us = median * uniform(1.0, 1.05),
                                      .p90_us = median * uniform(1.0, 1.1),
                                      .stdev_us = median * uniform(0.001, 0.02),
                                      .samples = 10 + pick(200)};
            sm.m.sm_clock_mhz = uniform(1500, 1980);
            sm.m.temperature_c = uniform(35, 70);
            if (pick(2)) {
              sm.m.counters_json = fmt::format(R"({{"dram_bytes_read":{},"sm_throughput_pct":{:.2f}}})",
                                               100000 + pick(1000000), uniform(10, 95));
            }
            if (!is_baseline && (++ok_count == 1 || pick(3) == 0)) best = sm.id;
          }
          f.measurements.push_back(std::move(sm));
        }
        if (best != 0) f.best_ids.push_back(best);
      }
    }
  }
  return f;
}

ReportData build(const Fixture& fixture, bool winners_only) {
  ReportData meta;
  meta.ktune_version = "0.1.0-test";
  meta.generated_at = "2025-01-02T00:00:00Z";
  meta.winners_only = winners_only;
  ReportBuilder builder(std::move(meta));
  for (const auto& [id, run] : fixture.runs) builder.add_run(id, run);
  for (const cache::StoredMeasurement& m : fixture.measurements) builder.add(m);
  for (const int64_t id : fixture.best_ids) builder.mark_best(id);
  return builder.finish();
}

}  // namespace ktune::reports::testing
