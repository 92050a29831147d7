// Fidelity of a measurement and the resume lookup ConfigCache::results_for: the latest result per
// config of one key, and which requests a stored result answers.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "cache/detail/sqlite_db.hpp"
#include "cache_test_util.hpp"
#include "ktune/error.hpp"

namespace ktune::cache {
namespace {

using testing::Rng;
using testing::TempDir;

TEST(Fidelity, StoredAndReadBackAndValidated) {
  Rng r;
  SCOPED_TRACE(r.seed());
  TempDir dir;
  ConfigCache db = ConfigCache::open(dir / "a.db");
  const int64_t gpu = db.upsert_gpu(testing::random_gpu(r));
  const int64_t kernel = db.upsert_kernel(testing::random_kernel(r));
  const int64_t run = db.begin_run(testing::random_run(r));
  std::vector<Measurement> ms;
  for (int i = 0; i < 20; ++i) {
    ms.push_back(testing::random_measurement(r, testing::random_shape(r), DType::kBF16));
    if (r.coin()) ms.back().fidelity = r.real(0.01, 0.99);
  }
  Measurement defaulted = testing::random_measurement(r, testing::random_shape(r), DType::kF16);
  EXPECT_EQ(defaulted.fidelity, 1.0);
  ms.push_back(defaulted);
  db.record(run, gpu, kernel, ms);
  std::vector<double> back;
  db.for_each_measurement({}, [&](const StoredMeasurement& s) { back.push_back(s.m.fidelity); });
  ASSERT_EQ(back.size(), ms.size());
  for (size_t i = 0; i < ms.size(); ++i) EXPECT_EQ(back[i], ms[i].fidelity) << i;

  for (const double bad : {0.0, -r.real(0.1, 2), std::nan(""), std::numeric_limits<double>::infinity()}) {
    Measurement m = testing::random_measurement(r, testing::random_shape(r), DType::kBF16);
    m.fidelity = bad;
    try {
      db.record(run, gpu, kernel, {m});
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
    }
  }
  int rows = 0;
  db.for_each_measurement({}, [&](const StoredMeasurement&) { ++rows; });
  EXPECT_EQ(rows, static_cast<int>(ms.size()));
}

TEST(ResultsFor, LatestPerConfigWithFidelity) {
  Rng r;
  SCOPED_TRACE(r.seed());
  TempDir dir;
  ConfigCache db = ConfigCache::open(dir / "a.db");
  const int64_t gpu = db.upsert_gpu(testing::random_gpu(r));
  const int64_t other_gpu = db.upsert_gpu(testing::random_gpu(r));
  const int64_t kernel = db.upsert_kernel(testing::random_kernel(r));
  const std::string shape = testing::random_shape(r);
  const std::string layout = "nt";

  // A few configs, each measured several times over several runs (successive halving: rising
  // fidelity; sometimes a failure), interleaved with rows of other keys that must not show up.
  std::vector<std::string> names;
  for (int i = 0; i < 8; ++i) names.push_back("gemm.bf16.nt.cfg" + std::to_string(i) + "." + r.word(3));
  std::map<std::string, Measurement> want;  // independent reference: the last row recorded per name
  std::map<std::string, int64_t> want_id;
  for (int run_no = 0; run_no < 4; ++run_no) {
    const int64_t run = db.begin_run(testing::random_run(r));
    const double fidelity = std::ldexp(1.0, run_no - 3);  // 1/8, 1/4, 1/2, 1
    for (const std::string& name : names) {
      if (!r.coin()) continue;
      Measurement m = r.uniform(0, 4) == 0 ? testing::random_failure(r, shape, DType::kBF16)
                                           : testing::random_measurement(r, shape, DType::kBF16);
      m.config_name = name;
      m.layout = layout;
      m.fidelity = fidelity;
      if (r.uniform(0, 5) == 0) m.baseline = "cublas";
      Measurement elsewhere = m;  // the same row under another key
      int64_t elsewhere_gpu = gpu;
      switch (r.uniform(0, 3)) {
        case 0:
          elsewhere.layout = "nn";
          break;
        case 1:
          elsewhere.dtype = DType::kF16;
          break;
        case 2:
          elsewhere.shape = testing::random_shape(r);
          break;
        default:
          elsewhere_gpu = other_gpu;
          break;
      }
      int64_t id = 0;
      if (r.coin()) {
        id = db.record(run, gpu, kernel, {m})[0];
        db.record(run, elsewhere_gpu, kernel, {elsewhere});
      } else {
        db.record(run, elsewhere_gpu, kernel, {elsewhere});
        id = db.record(run, gpu, kernel, {m})[0];
      }
      want[name] = m;
      want_id[name] = id;
    }
  }
  ASSERT_FALSE(want.empty());

  const std::vector<StoredResult> got = db.results_for(gpu, kernel, shape, DType::kBF16, layout);
  ASSERT_EQ(got.size(), want.size());
  auto w = want.begin();
  for (const StoredResult& s : got) {  // ordered by config name, as std::map is
    const Measurement& m = w->second;
    EXPECT_EQ(s.config_name, w->first);
    EXPECT_EQ(s.measurement_id, want_id[w->first]);
    EXPECT_EQ(s.outcome, m.outcome);
    EXPECT_EQ(s.reason, m.reason);
    EXPECT_EQ(s.fidelity, m.fidelity);
    EXPECT_EQ(s.baseline, m.baseline);
    EXPECT_EQ(s.resources_json, m.resources_json);
    ASSERT_EQ(s.stats.has_value(), m.stats.has_value());
    if (m.stats) {
      EXPECT_EQ(s.stats->median_us, m.stats->median_us);
      EXPECT_EQ(s.stats->samples, m.stats->samples);
    }
    ++w;
  }
  EXPECT_TRUE(db.results_for(gpu, kernel, shape, DType::kBF16, "").empty());
  EXPECT_TRUE(db.results_for(gpu, kernel + 1000, shape, DType::kBF16, layout).empty());
}

TEST(ResultsFor, LatestMeansMeasuredLastNotImportedLast) {
  // After an import the row measured earlier may have the greater id: measured_at decides.
  TempDir dir;
  const auto row = [](int64_t id, double fidelity, const std::string& outcome, const std::string& at) {
    nlohmann::json j = {{"id", id},
                        {"run_id", 1},
                        {"gpu_id", 1},
                        {"kernel_id", 1},
                        {"shape", "m=8,n=8,k=8"},
                        {"dtype", "f16"},
                        {"layout", "nn"},
                        {"config_name", "c1"},
                        {"outcome", outcome},
                        {"fidelity", fidelity},
                        {"measured_at", at},
                        {"stats", nullptr}};
    if (outcome == "ok") {
      j["stats"] = {{"median_us", 9.0}, {"min_us", 8.5},   {"mean_us", 9.1},
                    {"p90_us", 9.4},    {"stdev_us", 0.2}, {"samples", 30}};
    } else {
      j["reason"] = "max rel error 0.3";
    }
    return j;
  };
  const nlohmann::json doc = {
      {"format", "ktune-export"},
      {"format_version", 1},
      {"gpus",
       {{{"id", 1},
         {"name", "G"},
         {"cc_major", 9},
         {"cc_minor", 0},
         {"sm_count", 132},
         {"memory_bytes", 1 << 30}}}},
      {"kernels", {{{"id", 1}, {"name", "gemm"}, {"source_hash", "ff"}}}},
      {"runs", {{{"id", 1}, {"started_at", "2025-03-01T00:00:00.000Z"}, {"host", "h"}}}},
      {"measurements",
       {row(1, 1.0, "incorrect", "2025-03-01T00:05:00.000Z"),
        row(2, 0.25, "ok", "2025-03-01T00:01:00.000Z")}},
      {"best", nlohmann::json::array()}};
  std::ofstream(dir / "in.json") << doc.dump();
  ConfigCache db = ConfigCache::open(dir / "a.db");
  db.import_json(dir / "in.json");
  const int64_t gpu = db.upsert_gpu({"G", 9, 0, 132, 1 << 30, "{}"});  // same key: the imported row
  const int64_t kernel = db.upsert_kernel({"gemm", "ff"});
  ASSERT_EQ(db.gpus().size(), 1u);
  const auto got = db.results_for(gpu, kernel, "m=8,n=8,k=8", DType::kF16, "nn");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].outcome, Outcome::kIncorrect);
  EXPECT_EQ(got[0].fidelity, 1.0);
  EXPECT_EQ(got[0].reason, "max rel error 0.3");
  EXPECT_FALSE(got[0].stats);
}

TEST(ResultsFor, AnswersRule) {
  Rng r;
  SCOPED_TRACE(r.seed());
  const double f = r.real(0.1, 0.9);
  StoredResult ok;
  ok.outcome = Outcome::kOk;
  ok.fidelity = f;
  EXPECT_TRUE(ok.answers(f));
  EXPECT_TRUE(ok.answers(f * r.real(0.1, 0.99)));
  EXPECT_FALSE(ok.answers(std::min(1.0, f * r.real(1.01, 2.0))));
  EXPECT_FALSE(ok.answers(1.0));
  for (const Outcome failed : {Outcome::kCompileError, Outcome::kExceedsLimits, Outcome::kLaunchError,
                               Outcome::kIncorrect, Outcome::kTimeout, Outcome::kCrashed}) {
    StoredResult s = ok;
    s.outcome = failed;
    EXPECT_TRUE(s.answers(1.0)) << to_string(failed);
    EXPECT_TRUE(s.answers(f)) << to_string(failed);
  }
  StoredResult skipped = ok;
  skipped.outcome = Outcome::kSkipped;
  skipped.fidelity = 1.0;
  EXPECT_FALSE(skipped.answers(f));
}

TEST(Schema, PreReleaseFileWithoutTheNewColumnsIsRefusedUnchanged) {
  Rng r;
  TempDir dir;
  const auto path = dir / "old.db";
  {
    ConfigCache db = ConfigCache::open(path);
    db.upsert_gpu(testing::random_gpu(r));
  }
  {
    detail::Database raw(path, detail::Database::Open::kReadWrite);
    raw.exec("DROP INDEX measurements_key");
    raw.exec("ALTER TABLE measurements DROP COLUMN fidelity");
    raw.exec("ALTER TABLE measurements DROP COLUMN layout");
  }
  const std::string before = testing::file_bytes(path);
  for (const auto mode : {ConfigCache::Mode::kReadWrite, ConfigCache::Mode::kReadOnly}) {
    try {
      ConfigCache db = ConfigCache::open(path, mode);
      ADD_FAILURE();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
      EXPECT_NE(std::string(e.what()).find("pre-release"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(testing::file_bytes(path), before);
}

}  // namespace
}  // namespace ktune::cache
