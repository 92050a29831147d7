// The winners' hardware counters as a table: the CUPTI pass's record ({"available", "metrics":
// {...}, "passes", ...}) gives one column a metric with numbers as the tables print them, a winner
// without counters gets its reason as a note, and the HTML and Markdown reports show the table
// rather than the raw JSON text.

#include "reports/counter_table.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "html_page.hpp"
#include "reports/markdown_reporter.hpp"
#include "reports/report_builder.hpp"

namespace ktune::reports {
namespace {

constexpr const char* kCupti =
    R"({"available":true,"metrics":{"dram__bytes_read.sum":33816576,)"
    R"("sm__throughput.avg.pct_of_peak_sustained_elapsed":87.3456},"passes":1,"ranges":2,"dropped_ranges":0,"ms":12.5})";
constexpr const char* kMissing = R"({"available":false,"reason":"CUPTI refused: insufficient privileges"})";

/// Three gemm keys with one ok row each (all winners): counters from CUPTI, none (with a reason),
/// and the flat form.
ReportData counters_report() {
  ReportBuilder builder(ReportData{});
  const char* counters[] = {kCupti, kMissing, R"({"dram__bytes_read.sum":1024.7})"};
  for (int i = 0; i < 3; ++i) {
    cache::StoredMeasurement m;
    m.id = i + 1;
    m.run_id = 1;
    m.gpu = {"NVIDIA H200", 9, 0, 132, 1, "{}"};
    m.kernel = {"gemm", "h"};
    m.m.shape = "m=" + std::to_string(16 << i) + ",n=4096,k=4096";
    m.m.dtype = DType::kBF16;
    m.m.layout = "nt";
    m.m.config_name = "gemm.c" + std::to_string(i);
    m.m.stats = cache::Stats{10, 9, 10, 11, 0.1, 20};
    m.m.counters_json = counters[i];
    builder.add(m);
  }
  return builder.finish();
}

TEST(CounterTable, OneColumnAMetricAndTheReasonAsANote) {
  const ReportData data = counters_report();
  const CounterTable t = counter_table(data, "gemm");
  EXPECT_EQ(t.columns, (std::vector<std::string>{"dram__bytes_read.sum",
                                                 "sm__throughput.avg.pct_of_peak_sustained_elapsed"}));
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(data.keys[t.rows[0].key].shape, "m=16,n=4096,k=4096");
  EXPECT_EQ(t.rows[0].cells, (std::vector<std::string>{"33816576", "87.3"}));
  EXPECT_EQ(t.rows[0].note, "");
  EXPECT_EQ(t.rows[1].cells, (std::vector<std::string>{"", ""}));
  EXPECT_EQ(t.rows[1].note, "CUPTI refused: insufficient privileges");
  EXPECT_EQ(t.rows[2].cells, (std::vector<std::string>{"1025", ""}));  // 1024.7: 3 digits, integer part kept
  EXPECT_TRUE(t.has_metrics());
  EXPECT_TRUE(t.has_notes());
  EXPECT_FALSE(counter_table(data, "softmax").has_metrics());
}

TEST(CounterTable, EveryDefaultMetricHasAUnit) {
  EXPECT_EQ(counter_unit("gpu__time_duration.sum"), "ns");
  EXPECT_EQ(counter_unit("dram__bytes_read.sum"), "bytes");
  EXPECT_EQ(counter_unit("dram__bytes_write.sum"), "bytes");
  EXPECT_EQ(counter_unit("sm__throughput.avg.pct_of_peak_sustained_elapsed"), "%");
  EXPECT_EQ(counter_unit("sm__warps_active.avg.pct_of_peak_sustained_active"), "%");
  EXPECT_EQ(counter_unit("lts__t_sector_hit_rate.pct"), "%");
  EXPECT_EQ(counter_unit("dram__bytes.sum.per_second"), "bytes/s");
  EXPECT_EQ(counter_unit("sm__cycles_elapsed.avg"), "cycles");
  EXPECT_EQ(counter_unit("launch__registers_per_thread"), "registers");
  EXPECT_EQ(counter_unit("a_name_without_a_unit"), "");
}

TEST(CounterTable, MarkdownShowsATableNotJson) {
  const ReportData data = counters_report();
  std::ostringstream out;
  MarkdownReporter().write(data, out);
  const std::string md = out.str();
  EXPECT_NE(md.find("| shape | dtype | layout | `dram__bytes_read.sum` (bytes) | "
                    "`sm__throughput.avg.pct_of_peak_sustained_elapsed` (%) | note |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| `m=16,n=4096,k=4096` | bf16 | `nt` | 33816576 | 87.3 | |"), std::string::npos) << md;
  EXPECT_NE(
      md.find("| `m=32,n=4096,k=4096` | bf16 | `nt` | – | – | CUPTI refused: insufficient privileges |"),
      std::string::npos)
      << md;
  EXPECT_EQ(md.find("\"metrics\""), std::string::npos);
}

TEST(CounterTable, HtmlShowsATableNotJson) {
  if (!std::filesystem::exists(testing::kChartJs))
    GTEST_SKIP() << "Chart.js missing at " << testing::kChartJs;
  const std::string page = testing::write_html(counters_report());
  const std::string table = testing::between(page, "id=\"counters-0\">", "</table>");
  ASSERT_FALSE(table.empty());
  EXPECT_NE(table.find("<th><code>dram__bytes_read.sum</code> <span class=\"unit\">(bytes)</span></th>"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("<td class=\"num\">33816576</td><td class=\"num\">87.3</td>"), std::string::npos)
      << table;
  EXPECT_NE(table.find("CUPTI refused: insufficient privileges"), std::string::npos);
  EXPECT_EQ(table.find("metrics"), std::string::npos);  // no raw JSON cell
  EXPECT_EQ(testing::count(table, "<tr>"), 4u);         // header and three winners
}

}  // namespace
}  // namespace ktune::reports
