/// The HTML report in a real browser (headless Chromium, no network): no script errors, every
/// chart drawn, the tables complete, hostile names never become markup, and the shipped H200
/// sample's headline (each winner's speed-up over its cuBLAS baseline and its fraction of the
/// calibrated ceiling) on screen.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fixture_db.hpp"
#include "headless_chromium.hpp"
#include "html_page.hpp"
#include "report_fixture.hpp"
#include "reports/report_loader.hpp"

namespace ktune::reports {
namespace {

/// Non-transparent pixels a drawn chart has at least: axes, labels and marks cover far more than
/// this on a 500x300 canvas, while a blank canvas has none.
constexpr int kMinInkPixels = 500;

class HtmlBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = testing::find_chromium();
    if (!chromium_)
      GTEST_SKIP()
          << "chromium not found (install: scripts/install-deps.sh --with-browser, or set KTUNE_CHROMIUM)";
    if (!std::filesystem::exists(testing::kChartJs)) GTEST_SKIP() << "Chart.js missing (libjs-chart.js)";
  }

  /// Writes `data` as HTML, loads it with #selftest, returns the page's self-test result.
  nlohmann::json open(const ReportData& data) {
    const std::filesystem::path page = dir_.path() / "report.html";
    std::ofstream(page, std::ios::binary) << testing::write_html(data);
    result_ = testing::run_headless(*chromium_, "file://" + page.string() + "#selftest", dir_.path());
    if (const char* keep = std::getenv("KTUNE_KEEP_REPORT"); keep != nullptr) {
      std::filesystem::copy_file(page, keep, std::filesystem::copy_options::overwrite_existing);
      std::ofstream(std::string(keep) + ".dom.html") << result_.dom;
      std::ofstream(std::string(keep) + ".log") << result_.log;
    }
    EXPECT_EQ(result_.exit_code, 0) << result_.log;
    const std::string selftest = testing::element_text(result_.dom, "ktune-selftest");
    EXPECT_FALSE(selftest.empty()) << "the page's self-test did not run; chromium log:\n" << result_.log;
    return selftest.empty() ? nlohmann::json::object() : nlohmann::json::parse(selftest);
  }

  /// No errors, and exactly the expected canvases, each inked: a panel for every chart with data
  /// and none for the others (derived here from the data, apart from the writer).
  void expect_clean_and_drawn(const nlohmann::json& selftest, const ReportData& data) {
    EXPECT_TRUE(selftest["errors"].empty()) << selftest["errors"].dump();
    EXPECT_EQ(testing::console_output(result_.log), "");
    std::set<std::string> expected;
    size_t heatmaps = 0;
    for (size_t k = 0; k < data.kernels.size(); ++k) {
      bool speedup = false, throughput = false, spread = false, outcomes = false;
      for (const ReportKey& key : data.keys) {
        if (key.kernel != data.kernels[k]) continue;
        speedup |= key.winner && key.baseline;
        spread |= key.winner.has_value();
      }
      for (const ReportRow& row : data.rows) {
        if (row.stored.kernel.name != data.kernels[k] || !data.listed(row)) continue;
        outcomes = true;
        if (row.timed_ok()) throughput |= row.work.bytes.has_value();
      }
      const std::string prefix = "chart-" + std::to_string(k) + "-";
      if (speedup) expected.insert(prefix + "speedup");
      if (throughput) expected.insert(prefix + "roofline");
      if (spread) expected.insert(prefix + "spread");
      if (outcomes) expected.insert(prefix + "outcomes");
      if (!data.winners_only) {  // winners only: one row a key, so no parameter varies
        expected.insert(prefix + "heatmap");
        ++heatmaps;
      }
    }
    std::set<std::string> canvases;
    for (const auto& [id, ink] : selftest["canvases"].items()) {
      canvases.insert(id);
      EXPECT_GE(ink.get<int>(), kMinInkPixels) << id;
    }
    EXPECT_EQ(canvases, expected);
    // Each roofline names its winners on the canvas (every fixture has fewer than 24 a kernel).
    for (const std::string& id : canvases) {
      if (!id.ends_with("-roofline")) continue;
      ASSERT_TRUE(selftest["rooflines"].contains(id)) << id;
      const nlohmann::json& marks = selftest["rooflines"][id];
      EXPECT_EQ(marks["winner_labels"], marks["winners"]) << id;
    }
    EXPECT_EQ(selftest["charts"].get<size_t>() + heatmaps, expected.size());  // the heat map is drawn by hand
    EXPECT_EQ(testing::count(result_.dom, "fewer than two config parameters vary"), 0u);
  }

  /// Each drawn roofline of an exported database `doc` (loaded as `data`), against what the export
  /// holds for its kernel: a dashed line for each (GPU, dtype) with a ceiling, the baselines
  /// drawn and each joined to its winner, and one label on the canvas for each winner.
  static void expect_rooflines_marked(const nlohmann::json& selftest, const ReportData& data,
                                      const nlohmann::json& doc) {
    std::map<int64_t, std::string> kernel_names;
    for (const auto& kernel : doc.at("kernels"))
      kernel_names[kernel.at("id").get<int64_t>()] = kernel.at("name");
    std::map<int64_t, const nlohmann::json*> gpus;
    for (const auto& gpu : doc.at("gpus")) gpus[gpu.at("id").get<int64_t>()] = &gpu.at("ceilings");
    size_t drawn = 0;
    for (size_t k = 0; k < data.kernels.size(); ++k) {
      const std::string id = "chart-" + std::to_string(k) + "-roofline";
      if (!selftest["canvases"].contains(id)) continue;
      ++drawn;
      std::set<std::pair<int64_t, std::string>> with_ceilings;  // (GPU, dtype)
      size_t baselines = 0, winners = 0;
      for (const auto& m : doc.at("measurements")) {
        if (kernel_names.at(m.at("kernel_id").get<int64_t>()) != data.kernels[k] || m.at("outcome") != "ok")
          continue;
        const nlohmann::json& ceilings = *gpus.at(m.at("gpu_id").get<int64_t>());
        const auto dtype = m.at("dtype").get<std::string>();
        if (ceilings.contains(dtype + "_tflops") || ceilings.contains("copy_gbps"))
          with_ceilings.emplace(m.at("gpu_id").get<int64_t>(), dtype);
        baselines += m.at("baseline") != "" ? 1 : 0;
      }
      for (const auto& b : doc.at("best"))
        winners += kernel_names.at(b.at("kernel_id").get<int64_t>()) == data.kernels[k] ? 1 : 0;
      const nlohmann::json& marks = selftest["rooflines"][id];
      ASSERT_TRUE(marks.is_object()) << id << ": " << selftest["rooflines"].dump();
      EXPECT_GE(marks["ceilings"].get<size_t>(), with_ceilings.size()) << id;
      if (baselines > 0) EXPECT_GT(marks["baselines"].get<size_t>(), 0u) << id;
      EXPECT_EQ(marks["connectors"], marks["baselines"]) << id << ": each baseline joined to its winner";
      EXPECT_EQ(marks["winners"].get<size_t>(), winners) << id;
      EXPECT_EQ(marks["winner_labels"].get<size_t>(), winners) << id;
    }
    EXPECT_GT(drawn, 0u) << "the sample has a roofline";
  }

  std::optional<std::filesystem::path> chromium_;
  testing::TempDir dir_;
  testing::BrowserResult result_;
};

TEST_F(HtmlBrowserTest, EveryChartDrawnWithoutErrors) {
  const testing::Fixture f = testing::make_fixture({.seed = 71, .two_gpus = true});
  const ReportData data = testing::build(f);
  const nlohmann::json selftest = open(data);
  expect_clean_and_drawn(selftest, data);
  for (size_t k = 0; k < data.kernels.size(); ++k) {
    size_t expected = 0;
    for (const ReportKey& key : data.keys) expected += key.kernel == data.kernels[k] && key.winner ? 1 : 0;
    const std::string table =
        testing::between(result_.dom, "id=\"winners-" + std::to_string(k) + "\">", "</table>");
    EXPECT_EQ(testing::count(table, "<tr>"), expected + 1) << data.kernels[k];
  }
}

/// The text of each cell of each body row of a table's HTML, tags inside the cells dropped.
std::vector<std::vector<std::string>> body_rows(const std::string& table) {
  std::vector<std::vector<std::string>> rows;
  const std::string body = testing::between(table, "<tbody>", "</tbody>");
  for (size_t tr = body.find("<tr>"); tr != std::string::npos; tr = body.find("<tr>", tr + 4)) {
    const std::string row = testing::between(body.substr(tr), "<tr>", "</tr>");
    std::vector<std::string> cells;
    for (size_t td = row.find("<td"); td != std::string::npos; td = row.find("<td", td + 3)) {
      const size_t open_end = row.find('>', td);
      const std::string raw = row.substr(open_end + 1, row.find("</td>", open_end) - open_end - 1);
      std::string text;
      bool in_tag = false;
      for (const char c : raw) {
        if (c == '<') in_tag = true;
        if (!in_tag) text += c;
        if (c == '>') in_tag = false;
      }
      cells.push_back(text);
    }
    rows.push_back(cells);
  }
  return rows;
}

TEST_F(HtmlBrowserTest, TheShippedSampleShowsEachWinnersSpeedupAndFractionOfTheCeiling) {
  // The speed-ups expected are computed here from the export itself (baseline median / winner
  // median of each tuned key), not by the report's code.
  const char* checkout = std::getenv("KTUNE_SOURCE_DIR");  // set by ctest
  ASSERT_NE(checkout, nullptr) << "KTUNE_SOURCE_DIR is not set";
  const auto source = std::filesystem::path(checkout) / "examples" / "h200-quick-sample.json";
  const nlohmann::json doc = nlohmann::json::parse(std::ifstream(source));
  std::map<int64_t, const nlohmann::json*> by_id;
  for (const auto& m : doc.at("measurements")) by_id[m.at("id").get<int64_t>()] = &m;
  std::map<std::string, double> expected;  // shape -> speed-up
  for (const auto& b : doc.at("best")) {
    const nlohmann::json& winner = *by_id.at(b.at("measurement_id").get<int64_t>());
    for (const auto& m : doc.at("measurements")) {
      if (m.at("baseline") == "cublas" && m.at("shape") == winner.at("shape"))
        expected[winner.at("shape").get<std::string>()] =
            m.at("stats").at("median_us").get<double>() / winner.at("stats").at("median_us").get<double>();
    }
  }
  ASSERT_EQ(expected.size(), doc.at("best").size())
      << "every tuned key of the sample has its cuBLAS baseline";
  ASSERT_FALSE(doc.at("gpus").at(0).at("ceilings").empty()) << "the sample's GPU is calibrated";

  cache::ConfigCache db = cache::ConfigCache::open(dir_.path() / "sample.db");
  db.import_json(source);
  const ReportData data = load_report_data(db, ReportQuery{});
  const nlohmann::json selftest = open(data);
  expect_clean_and_drawn(selftest, data);
  expect_rooflines_marked(selftest, data, doc);
  const std::string table = testing::between(result_.dom, "id=\"winners-0\">", "</table>");
  const auto rows = body_rows(table);
  ASSERT_EQ(rows.size(), expected.size());
  for (const auto& cells : rows) {
    ASSERT_EQ(cells.size(), 15u);
    const std::string& shape = cells[1];
    ASSERT_EQ(expected.count(shape), 1u) << shape;
    EXPECT_EQ(cells[6], "cublas") << shape;
    ASSERT_FALSE(cells[8].empty()) << shape;
    EXPECT_EQ(cells[8].substr(cells[8].size() - 2), "×") << cells[8];  // "1.26×"
    const double speedup = std::stod(cells[8]);
    EXPECT_NEAR(speedup, expected[shape], 0.006 * expected[shape] + 0.005) << shape << ": " << cells[8];
    const double pct = std::stod(cells[11]);  // % of roofline: a number in (0, 100]
    EXPECT_GT(pct, 0) << shape;
    EXPECT_LE(pct, 100) << shape;
    EXPECT_FALSE(cells[12].empty() || cells[12] == "–") << shape << ": the bound is named";
  }
}

TEST_F(HtmlBrowserTest, FromAFixtureDatabaseWithWinnersOnly) {
  const testing::Fixture f = testing::make_fixture({.seed = 72});
  testing::write_fixture_db(f, dir_.path() / "ktune.db");
  const cache::ConfigCache db =
      cache::ConfigCache::open(dir_.path() / "ktune.db", cache::ConfigCache::Mode::kReadOnly);
  ReportQuery query;
  query.winners_only = true;
  const ReportData data = load_report_data(db, query);
  expect_clean_and_drawn(open(data), data);
}

TEST_F(HtmlBrowserTest, HostileNamesCannotInjectMarkupOrScript) {
  const testing::Fixture f = testing::make_fixture({.seed = 73, .hostile = true});
  const ReportData data = testing::build(f);
  const nlohmann::json selftest = open(data);
  expect_clean_and_drawn(selftest, data);
  EXPECT_EQ(selftest["scripts"].get<int>(), 4);  // ours only
  EXPECT_EQ(result_.dom.find("<img"), std::string::npos);
  EXPECT_EQ(result_.dom.find("<svg"), std::string::npos);
  EXPECT_EQ(result_.dom.find("<b>"), std::string::npos);
  EXPECT_EQ(result_.dom.find("PWNED</title>"), std::string::npos);
  EXPECT_EQ(testing::count(result_.dom, "<script"), 4u);
  // The names are there, as text.
  EXPECT_NE(result_.dom.find("&lt;img src=x onerror=\"document.title='PWNED'\"&gt;"), std::string::npos);
  EXPECT_NE(result_.dom.find("Ωμέγα 卡"), std::string::npos);
}

}  // namespace
}  // namespace ktune::reports
