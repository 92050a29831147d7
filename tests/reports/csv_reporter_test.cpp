#include "reports/csv_reporter.hpp"

#include <gtest/gtest.h>

#include <charconv>
#include <map>
#include <sstream>

#include "csv_parser.hpp"
#include "report_fixture.hpp"
#include "report_reference.hpp"

namespace ktune::reports {
namespace {

std::string write_csv(const ReportData& data) {
  std::ostringstream out;
  CsvReporter().write(data, out);
  return out.str();
}

double number(const std::string& text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size())
    throw std::runtime_error("not a number: '" + text + "'");
  return value;
}

int64_t integer(const std::string& text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size())
    throw std::runtime_error("not an integer: '" + text + "'");
  return value;
}

TEST(CsvReporter, ParsesBackWithEveryColumnAndType) {
  const testing::Fixture f = testing::make_fixture({.seed = 21, .hostile = true});
  const testing::Expected e = testing::expected_for(f);
  const testing::CsvTable table = testing::parse_csv(write_csv(testing::build(f)));
  ASSERT_EQ(table.size(), f.measurements.size() + 1);
  const std::vector<std::string>& header = table[0];
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i)
    ASSERT_TRUE(col.emplace(header[i], i).second) << "duplicate " << header[i];
  for (const char* name : {"measurement_id",
                           "run_id",
                           "gpu",
                           "kernel",
                           "config_name",
                           "param_bm",
                           "param_bn",
                           "param_stages",
                           "param_swizzle",
                           "shape",
                           "dim_m",
                           "dim_n",
                           "dim_k",
                           "dim_rows",
                           "dim_cols",
                           "dtype",
                           "outcome",
                           "reason",
                           "median_us",
                           "min_us",
                           "p90_us",
                           "stdev_us",
                           "samples",
                           "tflops",
                           "gbps",
                           "pct_of_ceiling",
                           "speedup",
                           "winner",
                           "run_started_at",
                           "counter_dram_bytes_read",
                           "counter_sm_throughput_pct"}) {
    EXPECT_TRUE(col.contains(name)) << name;
  }
  // Parameter, dimension and counter columns each come sorted.
  std::vector<std::string> params;
  for (const std::string& h : header) {
    if (h.starts_with("param_")) params.push_back(h);
  }
  EXPECT_TRUE(std::is_sorted(params.begin(), params.end()));

  for (size_t r = 1; r < table.size(); ++r) {
    const std::vector<std::string>& row = table[r];
    ASSERT_EQ(row.size(), header.size()) << "row " << r;
    const cache::StoredMeasurement& m = f.measurements[r - 1];
    EXPECT_EQ(integer(row[col["measurement_id"]]), m.id);
    EXPECT_EQ(integer(row[col["run_id"]]), m.run_id);
    EXPECT_EQ(row[col["gpu"]], m.gpu.name);
    EXPECT_EQ(row[col["kernel"]], m.kernel.name);
    EXPECT_EQ(row[col["config_name"]], m.m.config_name);
    EXPECT_EQ(row[col["shape"]], m.m.shape);
    EXPECT_EQ(row[col["reason"]], m.m.reason);  // quotes, commas, line breaks, U+2028 survive
    EXPECT_EQ(row[col["winner"]], e.winners.contains(m.id) ? "true" : "false");
    if (m.m.stats) {
      EXPECT_EQ(number(row[col["median_us"]]), m.m.stats->median_us);  // exact round trip
      EXPECT_EQ(number(row[col["p90_us"]]), m.m.stats->p90_us);
      EXPECT_EQ(integer(row[col["samples"]]), m.m.stats->samples);
      EXPECT_EQ(row[col["outcome"]], "ok");
    } else {
      EXPECT_EQ(row[col["median_us"]], "");
      EXPECT_NE(row[col["outcome"]], "ok");
    }
    if (m.m.baseline.empty()) {
      const size_t at = m.m.config_json.find("\"bm\":");
      EXPECT_EQ(integer(row[col["param_bm"]]),
                integer(m.m.config_json.substr(at + 5, m.m.config_json.find(',', at) - at - 5)));
    } else {
      EXPECT_EQ(row[col["param_bm"]], "");
    }
    if (m.kernel.name == "gemm" && m.m.stats) {
      const double mnk = static_cast<double>(integer(row[col["dim_m"]])) *
                         static_cast<double>(integer(row[col["dim_n"]])) *
                         static_cast<double>(integer(row[col["dim_k"]]));
      EXPECT_NEAR(number(row[col["tflops"]]), 2 * mnk / (m.m.stats->median_us * 1e-6) / 1e12, 1e-9 * 2 * mnk);
      EXPECT_GT(number(row[col["pct_of_ceiling"]]), 0);
    }
    if (m.kernel.name == "softmax") {
      EXPECT_EQ(row[col["gbps"]], "");
    }
    const auto s = e.speedup.find(m.id);
    if (s != e.speedup.end()) {
      EXPECT_DOUBLE_EQ(number(row[col["speedup"]]), s->second);
    } else {
      EXPECT_EQ(row[col["speedup"]], "");
    }
  }
}

TEST(CsvReporter, WinnersOnlyListsOneRowPerKey) {
  const testing::Fixture f = testing::make_fixture({.seed = 22, .two_gpus = true});
  const testing::CsvTable table = testing::parse_csv(write_csv(testing::build(f, /*winners_only=*/true)));
  ASSERT_EQ(table.size(), f.best_ids.size() + 1);
  const auto winner_col = std::find(table[0].begin(), table[0].end(), "winner") - table[0].begin();
  const auto id_col = std::find(table[0].begin(), table[0].end(), "measurement_id") - table[0].begin();
  std::set<int64_t> ids;
  for (size_t r = 1; r < table.size(); ++r) {
    EXPECT_EQ(table[r][static_cast<size_t>(winner_col)], "true");
    ids.insert(integer(table[r][static_cast<size_t>(id_col)]));
  }
  EXPECT_EQ(ids, std::set<int64_t>(f.best_ids.begin(), f.best_ids.end()));
}

TEST(CsvReporter, EmptyReportHasAHeaderOnly) {
  const testing::CsvTable table = testing::parse_csv(write_csv(ReportData{}));
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table[0][0], "measurement_id");
}

}  // namespace
}  // namespace ktune::reports
