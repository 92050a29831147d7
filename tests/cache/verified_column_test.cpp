// measurements.verified (schema version 2): a result no reference checked (a user kernel with
// `verify = false`, docs/byo.md) is stored, read, answered as the best config, exported and merged
// as unverified; a version-1 file migrates with every old row verified.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "cache/detail/sqlite_db.hpp"
#include "cache_test_util.hpp"

namespace ktune::cache {
namespace {

using testing::Rng;
using testing::TempDir;

struct Stored {
  int64_t verified_id = 0;
  int64_t unverified_id = 0;
};

/// Two ok measurements of random shapes, one verified, one not; the unverified one is the best of its key.
Stored fill(ConfigCache& db, Rng& r) {
  const int64_t gpu = db.upsert_gpu(testing::random_gpu(r));
  const int64_t kernel = db.upsert_kernel({"scale", r.hex(16)});
  const int64_t run = db.begin_run(testing::random_run(r));
  Measurement a = testing::random_measurement(r, "n=4096", DType::kF32);
  a.outcome = Outcome::kOk;
  a.stats = Stats{12.5, 12.0, 12.6, 13.0, 0.2, 40};
  Measurement b = a;
  b.shape = "n=8192";
  b.verified = false;
  const auto ids = db.record(run, gpu, kernel, {a, b});
  db.set_best(ids[0]);
  db.set_best(ids[1]);
  return {ids[0], ids[1]};
}

TEST(VerifiedColumn, UnverifiedResultsReadBackUnverifiedEverywhere) {
  Rng r;
  TempDir dir;
  ConfigCache db = ConfigCache::open(dir / "v.db");
  const Stored s = fill(db, r);
  int seen = 0;
  db.for_each_measurement({}, [&](const StoredMeasurement& m) {
    EXPECT_EQ(m.m.verified, m.m.shape == "n=4096") << m.m.shape;
    ++seen;
  });
  EXPECT_EQ(seen, 2);
  for (const BestConfig& b : db.list_best({})) {
    EXPECT_EQ(b.verified, b.measurement_id == s.verified_id) << b.shape;
    EXPECT_EQ(nlohmann::json::parse(b.to_json()).at("verified"), b.verified);
  }
  Lookup lookup;
  lookup.gpu_name = db.list_best({}).front().gpu_name;
  lookup.kernel = "scale";
  lookup.dtype = DType::kF32;
  lookup.shape = "n=8192";
  const auto best = db.best(lookup, false);
  ASSERT_TRUE(best.has_value());
  EXPECT_FALSE(best->verified);
  lookup.shape = "n=4096";
  EXPECT_TRUE(db.best(lookup, false)->verified);

  // Export, then import into a fresh file: the flag travels.
  db.export_json(dir / "v.json");
  ConfigCache copy = ConfigCache::open(dir / "copy.db");
  copy.import_json(dir / "v.json");
  int unverified = 0;
  copy.for_each_measurement({}, [&](const StoredMeasurement& m) { unverified += m.m.verified ? 0 : 1; });
  EXPECT_EQ(unverified, 1);
}

TEST(VerifiedColumn, AVersion1FileMigratesWithEveryRowVerified) {
  Rng r;
  TempDir dir;
  const auto path = dir / "v1.db";
  {
    ConfigCache db = ConfigCache::open(path);
    fill(db, r);
  }
  {
    // Back to version 1: the column did not exist.
    detail::Database raw(path, detail::Database::Open::kReadWrite);
    raw.exec("ALTER TABLE measurements DROP COLUMN verified");
    raw.exec("DROP TABLE jobs");                                  // version 3's
    raw.exec("ALTER TABLE measurements DROP COLUMN work_flops");  // version 4's
    raw.exec("ALTER TABLE measurements DROP COLUMN work_bytes");
    raw.exec("PRAGMA user_version = 1");
  }
  ConfigCache db = ConfigCache::open(path);
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  int rows = 0;
  db.for_each_measurement({}, [&](const StoredMeasurement& m) {
    EXPECT_TRUE(m.m.verified);
    ++rows;
  });
  EXPECT_EQ(rows, 2);
}

}  // namespace
}  // namespace ktune::cache
