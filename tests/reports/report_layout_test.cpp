// The layout is part of a report's key: nt and nn rows of one shape form two keys, each with its
// own winner and baseline, and every format shows the layout. Within one baseline name the most
// recently measured row is the baseline (not the lowest median of several runs).

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "csv_parser.hpp"
#include "html_page.hpp"
#include "reports/csv_reporter.hpp"
#include "reports/html_reporter.hpp"
#include "reports/json_reporter.hpp"
#include "reports/markdown_reporter.hpp"
#include "reports/report_builder.hpp"

namespace ktune::reports {
namespace {

/// Rows of gemm m=64,n=2048,k=512 bf16 on one GPU, in both layouts: per layout three candidates
/// and a cuBLAS baseline measured in three runs, the latest run's the slowest of them.
struct LayoutFixture {
  std::vector<cache::StoredMeasurement> rows;
  std::map<std::string, int64_t> latest_cublas;   ///< layout -> id
  std::map<std::string, int64_t> fastest_cublas;  ///< layout -> id (an older run)
  std::map<std::string, int64_t> best;            ///< layout -> id of the named winner
};

LayoutFixture make_layout_fixture(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> us(20.0, 90.0);
  LayoutFixture f;
  const cache::GpuInfo gpu{"Test GPU Layout", 9, 0, 132, int64_t{141} << 30, "{}"};
  int64_t id = 0;
  const auto row = [&](const std::string& layout, const std::string& config, const std::string& baseline,
                       double median, int run) {
    cache::StoredMeasurement s;
    s.id = ++id;
    s.run_id = run;
    s.run_started_at = fmt::format("2026-11-2{}T09:00:00Z", run);
    s.measured_at = fmt::format("2026-11-2{}T09:00:{:02}Z", run, id);
    s.gpu = gpu;
    s.kernel = {"gemm", "hash-layout"};
    s.m.shape = "m=64,n=2048,k=512";
    s.m.dtype = DType::kBF16;
    s.m.layout = layout;
    s.m.config_name = config;
    s.m.config_json = R"({"template":"mma","params":{"BM":64}})";
    s.m.baseline = baseline;
    s.m.outcome = ktune::Outcome::kOk;
    cache::Stats st;
    st.median_us = st.min_us = st.mean_us = st.p90_us = median;
    st.samples = 20;
    s.m.stats = st;
    f.rows.push_back(s);
    return s.id;
  };
  for (const std::string layout : {"nt", "nn"}) {
    double fastest = 1e30;
    for (int c = 0; c < 3; ++c) {
      const double median = us(rng);
      const int64_t i = row(layout, fmt::format("gemm.bf16.{}.mma.c{}", layout, c), "", median, 1);
      if (median < fastest) {
        fastest = median;
        f.best[layout] = i;
      }
    }
    // Three cuBLAS runs: the oldest the fastest, the latest the slowest.
    const double base = us(rng);
    const std::string name = "cublas.bf16." + layout;
    f.fastest_cublas[layout] = row(layout, name, "cublas", base, 1);
    row(layout, name, "cublas", base * 1.1, 2);
    f.latest_cublas[layout] = row(layout, name, "cublas", base * 1.3, 3);
  }
  return f;
}

ReportData build(const LayoutFixture& f) {
  ReportBuilder b(ReportData{});
  for (const auto& s : f.rows) b.add(s);
  for (const auto& [layout, id] : f.best) b.mark_best(id);
  return b.finish();
}

TEST(ReportLayout, EachLayoutIsItsOwnKeyWithItsOwnWinnerAndLatestBaseline) {
  for (uint32_t seed : {3u, 17u, 101u}) {
    const LayoutFixture f = make_layout_fixture(seed);
    const ReportData d = build(f);
    ASSERT_EQ(d.keys.size(), 2u) << seed;
    for (const ReportKey& key : d.keys) {
      ASSERT_TRUE(key.winner && key.baseline) << key.layout;
      const ReportRow& w = d.rows[*key.winner];
      const ReportRow& b = d.rows[*key.baseline];
      EXPECT_EQ(w.stored.m.layout, key.layout);
      EXPECT_EQ(b.stored.m.layout, key.layout);
      EXPECT_EQ(w.stored.id, f.best.at(key.layout));
      EXPECT_EQ(b.stored.id, f.latest_cublas.at(key.layout)) << "the latest cuBLAS run, not the fastest";
      EXPECT_NE(b.stored.id, f.fastest_cublas.at(key.layout));
      ASSERT_TRUE(w.speedup.has_value());
      EXPECT_DOUBLE_EQ(*w.speedup, b.median_us() / w.median_us());
      for (const size_t i : key.rows) EXPECT_EQ(d.rows[i].stored.m.layout, key.layout);
    }
    EXPECT_NE(d.keys[0].layout, d.keys[1].layout);
  }
}

TEST(ReportLayout, EveryFormatShowsTheLayout) {
  const LayoutFixture f = make_layout_fixture(29);
  const ReportData d = build(f);

  std::ostringstream csv;
  CsvReporter().write(d, csv);
  const testing::CsvTable table = testing::parse_csv(csv.str());
  ASSERT_EQ(table.size(), f.rows.size() + 1);
  const auto& header = table[0];
  const auto layout_col = std::find(header.begin(), header.end(), "layout") - header.begin();
  const auto speedup_col = std::find(header.begin(), header.end(), "speedup") - header.begin();
  ASSERT_LT(static_cast<size_t>(layout_col), header.size());
  EXPECT_EQ(layout_col, speedup_col + 1) << "layout is appended after the existing fixed columns";
  EXPECT_EQ(header.front(), "measurement_id");
  for (size_t r = 1; r < table.size(); ++r) EXPECT_EQ(table[r][layout_col], f.rows[r - 1].m.layout);

  std::ostringstream js;
  JsonReporter().write(d, js);
  const auto doc = nlohmann::json::parse(js.str());
  ASSERT_EQ(doc.at("winners").size(), 2u);
  std::set<std::string> winner_layouts;
  for (const auto& w : doc.at("winners")) {
    winner_layouts.insert(w.at("layout").get<std::string>());
    EXPECT_NE(w.at("config_name").get<std::string>().find("." + w.at("layout").get<std::string>() + "."),
              std::string::npos)
        << w.dump();
    EXPECT_NE(w.at("baseline_name"), "");
  }
  EXPECT_EQ(winner_layouts, (std::set<std::string>{"nt", "nn"}));
  ASSERT_EQ(doc.at("measurements").size(), f.rows.size());
  for (size_t i = 0; i < f.rows.size(); ++i)
    EXPECT_EQ(doc.at("measurements")[i].at("layout"), f.rows[i].m.layout);

  std::ostringstream md;
  MarkdownReporter().write(d, md);
  EXPECT_NE(md.str().find("| shape | dtype | layout | winner |"), std::string::npos) << md.str();
  EXPECT_NE(md.str().find("| `nt` | `gemm.bf16.nt.mma."), std::string::npos) << md.str();
  EXPECT_NE(md.str().find("| `nn` | `gemm.bf16.nn.mma."), std::string::npos) << md.str();

  if (!std::filesystem::exists(testing::kChartJs))
    GTEST_SKIP() << "Chart.js missing at " << testing::kChartJs;
  std::ostringstream html;
  HtmlReporter(testing::kChartJs).write(d, html);
  EXPECT_NE(html.str().find("<th>layout</th>"), std::string::npos);
  EXPECT_NE(html.str().find("<td>nn</td>"), std::string::npos);
  EXPECT_NE(html.str().find("<td>nt</td>"), std::string::npos);
}

}  // namespace
}  // namespace ktune::reports
