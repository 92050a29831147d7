#include "reports/report_loader.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "csv_parser.hpp"
#include "fixture_db.hpp"
#include "ktune/error.hpp"
#include "report_reference.hpp"
#include "reports/reporter.hpp"

namespace ktune::reports {
namespace {

class ReportLoaderTest : public ::testing::Test {
 protected:
  void load(const testing::FixtureOptions& options) {
    fixture_ = testing::make_fixture(options);
    ids_ = testing::write_fixture_db(fixture_, dir_.path() / "ktune.db");
  }
  ReportData report(const ReportQuery& query = {}) const {
    const cache::ConfigCache db =
        cache::ConfigCache::open(dir_.path() / "ktune.db", cache::ConfigCache::Mode::kReadOnly);
    return load_report_data(db, query);
  }
  int64_t db_id(int64_t fixture_id) const { return ids_.at(fixture_id); }

  testing::TempDir dir_;
  testing::Fixture fixture_;
  std::map<int64_t, int64_t> ids_;
};

TEST_F(ReportLoaderTest, DatabaseReportMatchesTheReference) {
  load({.seed = 61, .hostile = true, .two_gpus = true});
  const testing::Expected e = testing::expected_for(fixture_);
  const ReportData data = report();
  ASSERT_EQ(data.rows.size(), fixture_.measurements.size());
  std::map<int64_t, const ReportRow*> by_id;
  for (const ReportRow& row : data.rows) by_id[row.stored.id] = &row;
  for (const cache::StoredMeasurement& m : fixture_.measurements) {
    const ReportRow& row = *by_id.at(db_id(m.id));
    EXPECT_EQ(row.stored.m.config_name, m.m.config_name);
    EXPECT_EQ(row.stored.m.reason, m.m.reason);
    EXPECT_EQ(row.winner, e.winners.contains(m.id)) << m.id;
    const auto s = e.speedup.find(m.id);
    ASSERT_EQ(row.speedup.has_value(), s != e.speedup.end()) << m.id;
    if (row.speedup) {
      EXPECT_DOUBLE_EQ(*row.speedup, s->second);
    }
  }
  ASSERT_EQ(data.runs.size(), 2u);
  EXPECT_EQ(data.runs[0].info.host, fixture_.runs[0].second.host);
  EXPECT_EQ(data.gpus.size(), 2u);
  EXPECT_NE(data.gpus[0].ceilings_json.find("bf16_tflops"), std::string::npos);
  EXPECT_EQ(data.ktune_version, ktune_version());
}

TEST_F(ReportLoaderTest, FiltersSelectKernelGpuDtypeAndRun) {
  load({.seed = 62, .two_gpus = true});
  const auto count = [&](auto pred) {
    return static_cast<size_t>(
        std::count_if(fixture_.measurements.begin(), fixture_.measurements.end(), pred));
  };
  ReportQuery q;
  q.filter.kernel = "copy";
  EXPECT_EQ(report(q).rows.size(), count([](const auto& m) { return m.kernel.name == "copy"; }));
  q = {};
  q.filter.gpu_name = "NVIDIA L4";
  EXPECT_EQ(report(q).rows.size(), count([](const auto& m) { return m.gpu.name == "NVIDIA L4"; }));
  q = {};
  q.filter.dtype = DType::kF16;
  EXPECT_EQ(report(q).rows.size(), count([](const auto& m) { return m.m.dtype == DType::kF16; }));
  q = {};
  q.filter.run_id = 2;  // runs were created 1, 2 in a fresh database
  const ReportData run2 = report(q);
  EXPECT_EQ(run2.rows.size(), count([](const auto& m) { return m.run_id == 2; }));
  ASSERT_EQ(run2.runs.size(), 1u);
  EXPECT_EQ(run2.runs[0].id, 2);
  q = {};
  q.winners_only = true;
  const ReportData winners = report(q);
  EXPECT_EQ(std::count_if(winners.rows.begin(), winners.rows.end(),
                          [&](const ReportRow& r) { return winners.listed(r); }),
            static_cast<std::ptrdiff_t>(fixture_.best_ids.size()));
}

TEST_F(ReportLoaderTest, EveryFormatFromTheDatabase) {
  load({.seed = 63, .hostile = true});
  const ReportData data = report();
  for (const FormatEntry& format : formats()) {
    if (format.name == "html" && !std::filesystem::exists(ReporterOptions{}.chart_js)) continue;
    const std::filesystem::path out = dir_.path() / ("report." + format.name);
    write_report_file(data, format.name, out);
    std::ifstream in(out, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(text.empty()) << format.name;
    EXPECT_FALSE(std::filesystem::exists(out.string() + ".tmp"));
    if (format.name == "csv") {
      EXPECT_EQ(testing::parse_csv(text).size(), fixture_.measurements.size() + 1);
    } else if (format.name == "json") {
      EXPECT_EQ(nlohmann::json::parse(text)["measurements"].size(), fixture_.measurements.size());
    }
  }
}

TEST(ReportFormat, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(format_names().rfind("csv, json, md", 0), 0u);  // a toy format may follow html
  EXPECT_EQ(find_format("csv").name, "csv");
  EXPECT_EQ(find_format("md").name, "md");
  EXPECT_EQ(find_format("markdown").name, "md");
  EXPECT_EQ(find_format("html").media_type, "text/html; charset=utf-8");
  EXPECT_THROW(find_format("xlsx"), Error);
  try {
    find_format("pdf");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find("pdf"), std::string::npos);
  }
}

/// A format added through the registry only: one line a kernel of the report.
class KernelListReporter : public Reporter {
 public:
  void write(const ReportData& data, std::ostream& out) const override {
    for (const auto& kernel : data.kernels) out << kernel << "\n";
  }
};

TEST_F(ReportLoaderTest, AFormatAddedToTheRegistryIsWrittenLikeTheOthers) {
  if (formats().back().name != "kernels") {
    register_format({"kernels",
                     {"kernel-list"},
                     "text/plain; charset=utf-8",
                     "the kernels, one a line (a test's toy)",
                     [](const ReporterOptions&) -> std::unique_ptr<Reporter> {
                       return std::make_unique<KernelListReporter>();
                     }});
  }
  EXPECT_THROW(register_format({"md", {}, "text/plain", "again", formats().front().make}), Error);
  EXPECT_THROW(register_format({"other", {"markdown"}, "text/plain", "alias taken", formats().front().make}),
               Error);
  const auto choices = format_choices();
  EXPECT_NE(std::find(choices.begin(), choices.end(), "kernel-list"), choices.end());
  load({.seed = 64});
  const ReportData data = report();
  const std::filesystem::path out = dir_.path() / "kernels.txt";
  write_report_file(data, "kernel-list", out);
  std::ifstream in(out);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  EXPECT_EQ(lines, std::vector<std::string>(data.kernels.begin(), data.kernels.end()));
  EXPECT_FALSE(lines.empty());
}

TEST(ReportFile, UnwritablePathIsARuntimeError) {
  try {
    write_report_file(ReportData{}, "csv", "/nonexistent-dir/report.csv");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/report.csv"), std::string::npos);
  }
}

}  // namespace
}  // namespace ktune::reports
