#include "reports/report_builder.hpp"

#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "report_fixture.hpp"
#include "report_reference.hpp"

namespace ktune::reports {
namespace {

using testing::FixtureOptions;

TEST(ReportBuilder, WinnersBaselinesAndSpeedupsMatchAnIndependentReference) {
  for (const uint32_t seed : {1u, 2u, 3u}) {
    const testing::Fixture f = testing::make_fixture({.seed = seed, .two_gpus = seed == 2});
    const testing::Expected e = testing::expected_for(f);
    const ReportData data = testing::build(f);
    ASSERT_EQ(data.rows.size(), f.measurements.size());
    size_t winners = 0;
    for (const ReportRow& row : data.rows) {
      EXPECT_EQ(row.winner, e.winners.contains(row.stored.id)) << row.stored.id;
      winners += row.winner ? 1 : 0;
      const auto it = e.speedup.find(row.stored.id);
      ASSERT_EQ(row.speedup.has_value(), it != e.speedup.end()) << row.stored.id;
      if (row.speedup) {
        EXPECT_DOUBLE_EQ(*row.speedup, it->second);
        EXPECT_EQ(data.rows[*data.keys[row.key].baseline].stored.m.baseline, e.baseline_of.at(row.stored.id));
      }
    }
    EXPECT_EQ(winners, f.best_ids.size());
    EXPECT_EQ(data.gpus.size(), seed == 2 ? 2u : 1u);
    EXPECT_EQ(data.kernels, (std::vector<std::string>{"copy", "gemm", "softmax"}));
    EXPECT_EQ(data.param_columns, (std::vector<std::string>{"bm", "bn", "stages", "swizzle"}));
    EXPECT_EQ(data.runs.size(), 2u);
  }
}

TEST(ReportBuilder, ATemplateConfigsParamsAreOneColumnEach) {
  testing::Fixture f = testing::make_fixture({.seed = 12});
  // The stored form of a template config: {"template": T, "params": {...}}.
  std::map<int64_t, nlohmann::json> flat;
  for (cache::StoredMeasurement& s : f.measurements) {
    if (!nlohmann::json::accept(s.m.config_json)) continue;
    const nlohmann::json params = nlohmann::json::parse(s.m.config_json);
    flat[s.id] = params;
    s.m.config_json = nlohmann::json{{"template", s.id % 2 ? "odd" : "even"}, {"params", params}}.dump();
  }
  const ReportData data = testing::build(f);
  EXPECT_EQ(data.param_columns, (std::vector<std::string>{"bm", "bn", "stages", "swizzle", "template"}));
  for (const ReportRow& row : data.rows) {
    if (!flat.contains(row.stored.id)) continue;
    std::map<std::string, std::string> got(row.params.begin(), row.params.end());
    EXPECT_EQ(got.at("template"), row.stored.id % 2 ? "odd" : "even");
    EXPECT_FALSE(got.contains("params"));
    for (const auto& [name, value] : flat.at(row.stored.id).items()) {
      EXPECT_EQ(got.at(name), value.is_string() ? value.get<std::string>() : value.dump()) << name;
    }
  }
}

TEST(ReportBuilder, DerivedThroughputFollowsTheStoredWork) {
  const testing::Fixture f = testing::make_fixture({.seed = 9});
  const ReportData data = testing::build(f);
  size_t checked = 0;
  for (const ReportRow& row : data.rows) {
    if (row.stored.kernel.name != "gemm" || !row.timed_ok()) continue;
    double m = 0, n = 0, k = 0;
    for (const auto& [name, v] : row.dims) (name == "m" ? m : name == "n" ? n : k) = static_cast<double>(v);
    const double seconds = row.stored.m.stats->median_us / 1e6;
    ASSERT_TRUE(row.roofline.tflops);
    EXPECT_NEAR(*row.roofline.tflops, 2 * m * n * k / seconds / 1e12, 1e-9 * *row.roofline.tflops);
    ASSERT_TRUE(row.roofline.pct_of_ceiling);
    EXPECT_GT(*row.roofline.pct_of_ceiling, 0);
    ++checked;
  }
  EXPECT_GT(checked, 10u);
}

TEST(ReportBuilder, WithoutNamedWinnersTheFastestCandidateWins) {
  testing::Fixture f = testing::make_fixture({.seed = 4, .shapes_per_kernel = 2});
  f.best_ids.clear();
  const ReportData data = testing::build(f);
  for (const ReportKey& key : data.keys) {
    double fastest = 1e300;
    for (const size_t i : key.rows) {
      const ReportRow& r = data.rows[i];
      if (r.timed_ok() && r.stored.m.baseline.empty()) fastest = std::min(fastest, r.median_us());
    }
    ASSERT_TRUE(key.winner);
    EXPECT_EQ(data.rows[*key.winner].median_us(), fastest);
    EXPECT_TRUE(data.rows[*key.winner].stored.m.baseline.empty());
  }
}

TEST(ReportBuilder, InvalidTextAndJsonNeverBreakTheModel) {
  testing::Fixture f = testing::make_fixture({.seed = 5, .shapes_per_kernel = 1, .configs_per_shape = 3});
  f.measurements[0].m.config_json = "{not json";
  f.measurements[0].m.config_name = "bad\xFFname";
  f.measurements[1].m.counters_json = "[1,2]";
  f.measurements[1].m.shape = "m=abc,n=4";
  const ReportData data = testing::build(f);
  EXPECT_EQ(data.rows[0].stored.m.config_json, "{}");
  EXPECT_TRUE(data.rows[0].params.empty());
  EXPECT_EQ(data.rows[0].stored.m.config_name, "bad\xEF\xBF\xBDname");
  EXPECT_EQ(data.rows[1].stored.m.counters_json, "{}");
  ASSERT_EQ(data.rows[1].dims.size(), 1u);
  EXPECT_EQ(data.rows[1].dims[0].second, 4);
}

}  // namespace
}  // namespace ktune::reports

namespace ktune::reports {
namespace {

TEST(ReportBuilder, EachRowSaysHowItWasTimed) {
  testing::Fixture f = testing::make_fixture({.seed = 5});
  ASSERT_GE(f.measurements.size(), 4u);
  // The worker's keys (prefixed by the tuner), the baseline's, an eager one, and none.
  f.measurements[0].m.resources_json =
      R"({"registers":64,"worker_flush":"rotate","worker_launches_per_sample":37})";
  f.measurements[1].m.resources_json =
      R"j({"flush":"l2 (rotation needs 1 more buffer sets)","launches_per_sample":1})j";
  f.measurements[2].m.resources_json = R"({"worker_flush":"l2-clean"})";
  f.measurements[3].m.resources_json = R"({"registers":64})";
  const ReportData data = testing::build(f);
  std::map<int64_t, std::string> timing;
  for (const ReportRow& row : data.rows) timing[row.stored.id] = row.timing;
  EXPECT_EQ(timing.at(f.measurements[0].id), "rotate, graph x37");
  EXPECT_EQ(timing.at(f.measurements[1].id), "l2 (rotation needs 1 more buffer sets), events");
  EXPECT_EQ(timing.at(f.measurements[2].id), "l2-clean");
  EXPECT_EQ(timing.at(f.measurements[3].id), "");
}

}  // namespace
}  // namespace ktune::reports
