#include "reports/json_reporter.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "report_fixture.hpp"
#include "report_reference.hpp"

namespace ktune::reports {
namespace {

nlohmann::json write_json(const ReportData& data) {
  std::ostringstream out;
  JsonReporter().write(data, out);
  return nlohmann::json::parse(out.str());  // throws on invalid JSON
}

TEST(JsonReporter, OneDocumentWithEveryMeasurementAndWinner) {
  const testing::Fixture f = testing::make_fixture({.seed = 31, .hostile = true, .two_gpus = true});
  const testing::Expected e = testing::expected_for(f);
  const nlohmann::json doc = write_json(testing::build(f));
  EXPECT_EQ(doc["format"], "ktune-report");
  ASSERT_EQ(doc["gpus"].size(), 2u);
  EXPECT_EQ(doc["gpus"][0]["name"], f.measurements[0].gpu.name);
  EXPECT_TRUE(doc["gpus"][0]["ceilings"].contains("bf16_tflops"));
  EXPECT_EQ(doc["runs"].size(), 2u);
  EXPECT_EQ(doc["runs"][0]["arguments"], f.runs[0].second.arguments);
  ASSERT_EQ(doc["measurements"].size(), f.measurements.size());
  for (size_t i = 0; i < f.measurements.size(); ++i) {
    const nlohmann::json& j = doc["measurements"][i];
    const cache::StoredMeasurement& m = f.measurements[i];
    EXPECT_EQ(j["id"], m.id);
    EXPECT_EQ(j["config_name"], m.m.config_name);
    EXPECT_EQ(j["reason"], m.m.reason);
    EXPECT_EQ(j["kernel"], m.kernel.name);
    EXPECT_EQ(j["config"], nlohmann::json::parse(m.m.config_json));
    EXPECT_EQ(j["winner"], e.winners.contains(m.id));
    if (m.m.stats) {
      EXPECT_EQ(j["stats"]["median_us"].get<double>(), m.m.stats->median_us);
      EXPECT_EQ(j["stats"]["samples"].get<int64_t>(), m.m.stats->samples);
    } else {
      EXPECT_TRUE(j["stats"].is_null());
    }
    const auto s = e.speedup.find(m.id);
    if (s != e.speedup.end()) {
      EXPECT_DOUBLE_EQ(j["speedup"].get<double>(), s->second);
    } else {
      EXPECT_TRUE(j["speedup"].is_null());
    }
  }
  ASSERT_EQ(doc["winners"].size(), f.best_ids.size());
  for (const nlohmann::json& w : doc["winners"])
    EXPECT_TRUE(e.winners.contains(w["measurement_id"].get<int64_t>()));
}

TEST(JsonReporter, WinnersOnlyAndEmpty) {
  const testing::Fixture f = testing::make_fixture({.seed = 32});
  EXPECT_EQ(write_json(testing::build(f, true))["measurements"].size(), f.best_ids.size());
  const nlohmann::json empty = write_json(ReportData{});
  EXPECT_TRUE(empty["measurements"].empty());
  EXPECT_TRUE(empty["winners"].empty());
}

}  // namespace
}  // namespace ktune::reports
