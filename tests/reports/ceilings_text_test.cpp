// A GPU's ceilings print with the tables' significant digits in the HTML and Markdown reports
// (not as raw floats such as 772.1810083077294), while JSON and CSV keep the exact numbers.

#include "reports/ceilings_text.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "html_page.hpp"
#include "reports/json_reporter.hpp"
#include "reports/markdown_reporter.hpp"
#include "reports/report_builder.hpp"

namespace ktune::reports {
namespace {

constexpr const char* kCeilings =
    R"({"bf16_tflops":772.1810083077294,"copy_gbps":4280.4,"fp8_tflops":1544.36})";

TEST(CeilingsText, NumbersWithThreeSignificantDigits) {
  // Keys in name order, each value rounded to 3 significant digits (never fewer than its integer part).
  EXPECT_EQ(ceilings_text(kCeilings), "bf16_tflops 772 · copy_gbps 4280 · fp8_tflops 1544");
  EXPECT_EQ(ceilings_text(R"({"l2_gbps":0.123456,"note":"calibrated"})"), "l2_gbps 0.123 · note calibrated");
  EXPECT_EQ(ceilings_text("{}"), "not measured");
  EXPECT_EQ(ceilings_text("not json"), "not measured");
}

ReportData one_gpu_report() {
  ReportBuilder builder(ReportData{});
  cache::StoredMeasurement m;
  m.id = 1;
  m.run_id = 1;
  m.gpu = {"NVIDIA H200", 9, 0, 132, 150'754'820'096, kCeilings};
  m.kernel = {"gemm", "h"};
  m.m.shape = "m=16,n=4096,k=4096";
  m.m.dtype = DType::kBF16;
  m.m.layout = "nt";
  m.m.config_name = "gemm.a";
  m.m.stats = cache::Stats{10, 9, 10, 11, 0.1, 20};
  builder.add(m);
  return builder.finish();
}

TEST(CeilingsText, HtmlAndMarkdownRoundWhileJsonKeepsEveryDigit) {
  const ReportData data = one_gpu_report();
  std::ostringstream md, json;
  MarkdownReporter().write(data, md);
  JsonReporter().write(data, json);
  EXPECT_NE(md.str().find("bf16_tflops 772 · copy_gbps 4280 · fp8_tflops 1544"), std::string::npos)
      << md.str();
  EXPECT_EQ(md.str().find("772.18"), std::string::npos);
  const nlohmann::json doc = nlohmann::json::parse(json.str());
  EXPECT_EQ(doc["gpus"][0]["ceilings"]["bf16_tflops"].get<double>(), 772.1810083077294);
  if (!std::filesystem::exists(testing::kChartJs))
    GTEST_SKIP() << "Chart.js missing at " << testing::kChartJs;
  const std::string page = testing::write_html(data);
  const std::string gpus = testing::between(page, "id=\"gpus\">", "</table>");
  EXPECT_NE(gpus.find("bf16_tflops 772 · copy_gbps 4280 · fp8_tflops 1544"), std::string::npos) << gpus;
  EXPECT_EQ(gpus.find("772.18"), std::string::npos);
}

}  // namespace
}  // namespace ktune::reports
