// A chart with nothing to draw has no panel: its entry in the chart data is null and the page has
// no figure, canvas or placeholder text for it; a kernel with no chart at all has no chart grid.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "html_page.hpp"
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
    m.m.dtype = "f16";
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
  m.m.dtype = "f16";
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

}  // namespace
}  // namespace ktune::reports
