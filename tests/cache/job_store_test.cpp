// The jobs table (schema v2) and JobStore: a version-1 database gains the table on open with its
// data kept, and jobs move queued -> running -> done/failed/cancelled, back to queued on restart.

#include <gtest/gtest.h>

#include <filesystem>

#include "cache/config_cache.hpp"
#include "cache/detail/sqlite_db.hpp"
#include "cache/job_store.hpp"
#include "cache_test_util.hpp"

namespace ktune::cache {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

TEST(JobStore, AVersion1DatabaseGainsTheJobsTableAndKeepsItsRows) {
  TempDir tmp;
  const fs::path path = tmp / "v1.db";
  {
    auto db = ConfigCache::open(path);
    db.upsert_gpu(GpuInfo{"Old GPU", 9, 0, 132, 1LL << 30});
  }
  {
    // What a version-1 build left: no jobs table, user_version 1.
    detail::Database raw(path, detail::Database::Open::kReadWrite);
    raw.exec(
        "DROP TABLE jobs; ALTER TABLE measurements DROP COLUMN verified;"
        " ALTER TABLE measurements DROP COLUMN work_flops; ALTER TABLE measurements DROP COLUMN work_bytes;"
        " PRAGMA user_version = 1");
  }
  auto db = ConfigCache::open(path);
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  ASSERT_EQ(db.gpus().size(), 1U);
  EXPECT_EQ(db.gpus()[0].name, "Old GPU");
  const VerifyReport report = db.verify();
  EXPECT_TRUE(report.ok) << (report.problems.empty() ? "" : report.problems[0]);
  JobStore jobs(path);
  EXPECT_EQ(jobs.add("compile:sm_90", R"({"kernel":"gemm"})"), 1);
}

TEST(JobStore, JobsMoveThroughTheirStatesOneLaneAtATime) {
  TempDir tmp;
  const fs::path path = tmp / "jobs.db";
  { auto db = ConfigCache::open(path); }
  JobStore jobs(path);
  const int64_t a = jobs.add("device:0", R"({"kernel":"gemm"})");
  const int64_t b = jobs.add("device:0", R"({"kernel":"rmsnorm"})");
  const int64_t c = jobs.add("device:1", R"({"kernel":"softmax"})");
  EXPECT_FALSE(jobs.claim_next("device:7").has_value());

  const auto first = jobs.claim_next("device:0");
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->id, a);  // oldest first
  EXPECT_EQ(first->state, "running");
  EXPECT_TRUE(first->started_at.has_value());
  EXPECT_EQ(jobs.get(a)->state, "running");

  EXPECT_TRUE(jobs.cancel_queued(b));
  EXPECT_FALSE(jobs.cancel_queued(a)) << "a running job stops through its runner, not the table";
  EXPECT_EQ(jobs.get(b)->state, "cancelled");
  EXPECT_FALSE(jobs.claim_next("device:0").has_value());

  jobs.set_progress(a, R"({"evaluations":3})");
  EXPECT_EQ(jobs.get(a)->progress_json, R"({"evaluations":3})");
  // A server that died: the running job is queued again and keeps its first start time.
  EXPECT_EQ(jobs.requeue_running(), 1);
  EXPECT_EQ(jobs.get(a)->state, "queued");
  const auto again = jobs.claim_next("device:0");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->started_at, first->started_at);
  jobs.finish(a, "done", "", R"({"evaluations":7})");
  const auto done = jobs.get(a);
  EXPECT_EQ(done->state, "done");
  EXPECT_TRUE(done->finished_at.has_value());
  EXPECT_EQ(done->progress_json, R"({"evaluations":7})");

  const auto counts = jobs.count_by_state();
  EXPECT_EQ(counts.at("done"), 1);
  EXPECT_EQ(counts.at("cancelled"), 1);
  EXPECT_EQ(counts.at("queued"), 1);
  EXPECT_EQ(counts.at("running"), 0);
  const auto listed = jobs.list(10);
  ASSERT_EQ(listed.size(), 3U);
  EXPECT_EQ(listed[0].id, c);  // newest first
  EXPECT_FALSE(jobs.get(999).has_value());
}

TEST(JobStore, AnInvalidStateIsRefusedByTheTable) {
  TempDir tmp;
  const fs::path path = tmp / "bad.db";
  { auto db = ConfigCache::open(path); }
  JobStore jobs(path);
  const int64_t id = jobs.add("device:0", "{}");
  EXPECT_THROW(jobs.finish(id, "exploded", "", "{}"), std::exception);
  EXPECT_EQ(jobs.get(id)->state, "queued");
}

}  // namespace
}  // namespace ktune::cache
