// A chart with nothing to draw has no panel: its entry in the chart data is null and the page has
// no figure, canvas or placeholder text for it; a kernel with no chart at all has no chart grid.
// The roofline's points name their key, and its winners and baselines their config or baseline.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

#include "html_page.hpp"
#include "report_fixture.hpp"
#include "reports/html_chart_data.hpp"
#include "reports/report_builder.hpp"

namespace ktune::reports {
namespace {

/// softmax rows: one key, one config parameter that varies (so no heat map), no baseline (no
/// speed-up), no stored work (no roofline); two ok candidates (spread and outcomes have data).
ReportData softmax_report() {
  ReportBuilder builder(ReportData{});
  for (int i = 0; i < 2; ++i) {
    cache::StoredMeasurement m;
    m.id = i + 1;
    m.run_id = 1;
    m.gpu = {"NVIDIA H200", 9, 0, 132, 1, R"({"copy_gbps":4000})"};
    m.kernel = {"softmax", "h"};
    m.m.shape = "rows=4,cols=4096";
    m.m.dtype = DType::kF16;
    m.m.config_name = "softmax.w" + std::to_string(i);
    m.m.config_json = R"({"WARPS":)" + std::to_string(2 << i) + "}";
    m.m.stats = cache::Stats{10.0 + i, 9, 10, 11, 0.1, 20};
    builder.add(m);
  }
  return builder.finish();
}

TEST(ChartPanels, EmptyChartsAreNullInTheChartData) {
  const nlohmann::json charts = html_chart_data(softmax_report());
  const nlohmann::json& k = charts["kernels"][0];
  EXPECT_TRUE(k["speedup"].is_null());
  EXPECT_TRUE(k["roofline"].is_null());
  EXPECT_TRUE(k["heatmap"].is_null());
  EXPECT_FALSE(k["spread"].is_null());
  EXPECT_FALSE(k["outcomes"].is_null());
}

TEST(ChartPanels, ThePageHasPanelsOnlyForChartsWithData) {
  if (!std::filesystem::exists(testing::kChartJs))
    GTEST_SKIP() << "Chart.js missing at " << testing::kChartJs;
  const std::string page = testing::write_html(softmax_report());
  EXPECT_EQ(testing::count(page, "<canvas"), 2u);
  EXPECT_NE(page.find("id=\"chart-0-spread\""), std::string::npos);
  EXPECT_NE(page.find("id=\"chart-0-outcomes\""), std::string::npos);
  EXPECT_EQ(page.find("id=\"chart-0-heatmap\""), std::string::npos);
  EXPECT_EQ(page.find("fewer than two config parameters vary"), std::string::npos);
  EXPECT_EQ(testing::count(page, "<figure>"), 2u);
}

TEST(ChartPanels, AKernelWithNothingTimedHasNoChartGrid) {
  ReportBuilder builder(ReportData{.winners_only = true});
  cache::StoredMeasurement m;
  m.id = 1;
  m.run_id = 1;
  m.gpu = {"NVIDIA H200", 9, 0, 132, 1, "{}"};
  m.kernel = {"softmax", "h"};
  m.m.shape = "rows=4,cols=4096";
  m.m.dtype = DType::kF16;
  m.m.config_name = "softmax.bad";
  m.m.outcome = Outcome::kIncorrect;
  m.m.reason = "wrong";
  builder.add(m);
  const ReportData data = builder.finish();
  const nlohmann::json charts = html_chart_data(data);
  for (const char* name : {"speedup", "roofline", "heatmap", "spread", "outcomes"})
    EXPECT_TRUE(charts["kernels"][0][name].is_null()) << name;
  if (!std::filesystem::exists(testing::kChartJs))
    GTEST_SKIP() << "Chart.js missing at " << testing::kChartJs;
  const std::string page = testing::write_html(data);
  EXPECT_EQ(testing::count(page, "<canvas"), 0u);
  EXPECT_EQ(page.find("class=\"charts\""), std::string::npos);
  EXPECT_NE(page.find("No winner: no config of this kernel ran correctly."), std::string::npos);
}

size_t kernel_index(const ReportData& data, std::string_view name) {
  return static_cast<size_t>(std::find(data.kernels.begin(), data.kernels.end(), name) -
                             data.kernels.begin());
}

/// (shape label, y, name) of each point of one roofline series; name from `labels` when given.
using Mark = std::tuple<std::string, double, std::string>;
std::multiset<Mark> marks(const nlohmann::json& roofline, const char* series, const char* labels) {
  std::multiset<Mark> out;
  const nlohmann::json& points = roofline[series];
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].size(), 3u) << series;
    const auto shape = points[i][2].get<size_t>();
    EXPECT_LT(shape, roofline["shapes"].size()) << series;
    if (shape >= roofline["shapes"].size()) continue;
    out.emplace(roofline["shapes"][shape].get<std::string>(), points[i][1].get<double>(),
                labels ? roofline[labels].at(i).get<std::string>() : "");
  }
  if (labels) EXPECT_EQ(roofline[labels].size(), points.size()) << labels;
  return out;
}

TEST(ChartPanels, RooflinePointsNameTheirShapeAndTheCeilingsAreListed) {
  // Two GPUs: the H200 has ceilings, the L4 none; gemm has cuBLAS and default baselines.
  const ReportData data = testing::build(testing::make_fixture({.seed = 44, .two_gpus = true}));
  const nlohmann::json charts = html_chart_data(data);
  for (const std::string_view kernel : {"gemm", "copy"}) {
    const nlohmann::json& r = charts["kernels"][kernel_index(data, kernel)]["roofline"];
    ASSERT_FALSE(r.is_null()) << kernel;
    const bool flops = kernel == "gemm";
    EXPECT_EQ(r["mode"], flops ? "flops" : "bytes");
    // Expected from the rows: the label of each row's key, its throughput, its name.
    std::multiset<Mark> winners, baselines;
    std::set<Mark> candidates;  // (label, x, ""): a candidate lies at its key's x
    for (const ReportRow& row : data.rows) {
      if (row.stored.kernel.name != kernel || !row.timed_ok()) continue;
      const std::string label =
          row.stored.m.shape + " " + to_string(row.stored.m.dtype) + " @ " + data.gpus[row.gpu].name;
      const double y = flops ? *row.roofline.tflops : *row.roofline.gbps;
      const double x = flops ? *row.work.flops / *row.work.bytes : *row.work.bytes;
      if (row.winner)
        winners.emplace(label, y, row.stored.m.config_name);
      else if (!row.stored.m.baseline.empty())
        baselines.emplace(label, y, row.stored.m.baseline);
      else
        candidates.emplace(label, x, "");
    }
    ASSERT_EQ(winners.size(), 8u) << kernel;  // 4 shapes on each of 2 GPUs
    EXPECT_EQ(marks(r, "winners", "winner_labels"), winners) << kernel;
    EXPECT_EQ(marks(r, "baselines", "baseline_labels"), baselines) << kernel;
    EXPECT_EQ(baselines.size(), flops ? 16u : 8u) << kernel;  // cublas and default, or default
    ASSERT_FALSE(r["points"].empty());
    for (const nlohmann::json& p : r["points"]) {
      const std::string label = r["shapes"].at(p[2].get<size_t>()).get<std::string>();
      EXPECT_EQ(candidates.count({label, p[0].get<double>(), ""}), 1u) << kernel << " " << label;
    }
    // One ceiling entry: the H200's for the kernel's dtype (the L4 has none).
    const nlohmann::json h200 = nlohmann::json::parse(data.gpus[0].ceilings_json);
    const std::string_view dtype = flops ? "bf16" : "f32";
    const nlohmann::json tflops = flops ? h200["bf16_tflops"] : nlohmann::json();
    EXPECT_EQ(r["ceilings"], nlohmann::json::array({{{"label", data.gpus[0].name + " " + std::string(dtype)},
                                                     {"tflops", tflops},
                                                     {"gbps", h200["copy_gbps"]}}}))
        << kernel;
  }
}

TEST(ChartPanels, RooflineSamplesItsCandidatesAndKeepsEveryWinnerAndBaseline) {
  // 20 shapes of 300 configs: about 4800 timed candidates of gemm, more than the 4000 a chart draws.
  const ReportData data =
      testing::build(testing::make_fixture({.seed = 45, .shapes_per_kernel = 20, .configs_per_shape = 300}));
  const nlohmann::json r = html_chart_data(data)["kernels"][kernel_index(data, "gemm")]["roofline"];
  ASSERT_FALSE(r.is_null());
  EXPECT_EQ(r["sampled_every"], 2);
  EXPECT_LE(r["points"].size(), 4000u);
  EXPECT_GE(r["points"].size(), 1500u);
  EXPECT_EQ(r["winners"].size(), 20u);
  EXPECT_EQ(r["baselines"].size(), 40u);
  EXPECT_EQ(r["shapes"].size(), 20u);
  for (const nlohmann::json& p : r["points"]) EXPECT_LT(p[2].get<size_t>(), 20u);
}

}  // namespace
}  // namespace ktune::reports
