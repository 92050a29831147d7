#include "reports/html_reporter.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>

#include "html_page.hpp"
#include "ktune/error.hpp"
#include "report_fixture.hpp"

namespace ktune::reports {
namespace {

using testing::count;

class HtmlReporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(testing::kChartJs)) {
      GTEST_SKIP() << "Chart.js missing at " << testing::kChartJs
                   << " (install libjs-chart.js: scripts/install-deps.sh)";
    }
  }
};

TEST_F(HtmlReporterTest, SelfContainedWithNoNetworkReference) {
  const testing::Fixture f = testing::make_fixture({.seed = 41});
  const std::string page = testing::write_html(testing::build(f));
  EXPECT_FALSE(
      std::regex_search(page, std::regex(R"((src|href)\s*=\s*["']?\s*(https?:)?//)", std::regex::icase)));
  EXPECT_EQ(count(page, "<link"), 0u);
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(page.find("Chart.js v3"), std::string::npos);  // inlined, not referenced
  EXPECT_EQ(count(page, "<script"), 4u);
  // Panels only for charts with data: gemm and copy have all five; softmax has no stored work
  // (no roofline) and no baseline (no speed-up).
  EXPECT_EQ(count(page, "<canvas"), 5u + 5u + 3u);
  EXPECT_EQ(page.find("id=\"chart-2-roofline\""), std::string::npos);
  EXPECT_EQ(page.find("id=\"chart-2-speedup\""), std::string::npos);
}

TEST_F(HtmlReporterTest, WinnersTablesHaveOneRowPerKeyWithAWinner) {
  const testing::Fixture f = testing::make_fixture({.seed = 42, .two_gpus = true});
  const ReportData data = testing::build(f);
  const std::string page = testing::write_html(data);
  for (size_t k = 0; k < data.kernels.size(); ++k) {
    size_t expected = 0;
    for (const ReportKey& key : data.keys) expected += key.kernel == data.kernels[k] && key.winner ? 1 : 0;
    const std::string table = testing::between(page, "id=\"winners-" + std::to_string(k) + "\">", "</table>");
    EXPECT_EQ(count(table, "<tr>"), expected + 1) << data.kernels[k];  // plus the header row
    EXPECT_GT(expected, 0u);
  }
}

TEST_F(HtmlReporterTest, HostileNamesStayText) {
  const testing::Fixture f = testing::make_fixture({.seed = 43, .hostile = true});
  const ReportData data = testing::build(f);
  const std::string page = testing::write_html(data);
  EXPECT_EQ(page.find(testing::kHostileMarkup), std::string::npos);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("<svg"), std::string::npos);
  EXPECT_EQ(count(page, "<script"), 4u);
  EXPECT_EQ(count(page, "</script"), 4u);
  EXPECT_NE(page.find("&lt;img src=x onerror=&quot;document.title=&#39;PWNED&#39;&quot;&gt;"),
            std::string::npos);
  // The chart data parses back to the original names.
  const std::string json = testing::between(page, "id=\"ktune-data\">", "</script>");
  EXPECT_EQ(json.find('<'), std::string::npos);
  EXPECT_EQ(json.find("\xE2\x80\xA8"), std::string::npos);
  const nlohmann::json charts = nlohmann::json::parse(json);
  ASSERT_EQ(charts["kernels"].size(), data.kernels.size());
  size_t found = 0;
  for (const nlohmann::json& k : charts["kernels"]) {
    found += k["name"].get<std::string>().find("</script><script>document.title='PWNED'") != std::string::npos
                 ? 1
                 : 0;
  }
  EXPECT_EQ(found, 1u);
}

TEST_F(HtmlReporterTest, EmptyReportStillRenders) {
  const std::string page = testing::write_html(ReportData{});
  EXPECT_NE(page.find("No measurements match the filter."), std::string::npos);
  EXPECT_EQ(count(page, "<canvas"), 0u);
}

TEST(HtmlReporter, MissingChartJsFailsNamingThePackage) {
  try {
    std::ostringstream out;
    HtmlReporter("/nonexistent/chart.min.js").write(ReportData{}, out);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(std::string(e.what()).find("libjs-chart.js"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/chart.min.js"), std::string::npos);
  }
}

}  // namespace
}  // namespace ktune::reports
