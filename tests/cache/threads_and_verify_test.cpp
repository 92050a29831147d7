#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "cache/config_cache.hpp"
#include "cache/detail/sqlite_db.hpp"
#include "cache_test_util.hpp"
#include "ktune/error.hpp"

namespace ktune::cache {
namespace {

using testing::Rng;
using testing::TempDir;

TEST(Threads, OneHandleSharedByThreads) {
  Rng r;
  SCOPED_TRACE(r.seed());
  TempDir dir;
  ConfigCache db = ConfigCache::open(dir / "t.db");
  const GpuInfo gpu = testing::random_gpu(r);
  const KernelInfo kernel = testing::random_kernel(r);
  const int64_t g = db.upsert_gpu(gpu);
  const int64_t k = db.upsert_kernel(kernel);
  const int64_t run = db.begin_run(testing::random_run(r));
  constexpr int kThreads = 4;
  constexpr int kEach = 40;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        Rng tr;
        for (int i = 0; i < kEach; ++i) {
          const std::string key = fmt::format("t{}-{}", t, i);
          db.store_compiled({key, tr.word(64), "log", "{}", "{}", 1.5, kernel.name, kernel.source_hash});
          const auto got = db.find_compiled(key);
          if (!got || got->key != key) ++failures;
          const std::string shape = testing::random_shape(tr);
          db.set_best(db.record(run, g, k, {testing::random_measurement(tr, shape, DType::kBF16)})[0]);
          if (!db.best({gpu.name, kernel.name, shape, DType::kBF16, std::nullopt, ""}, false)) ++failures;
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  int rows = 0;
  db.for_each_measurement({}, [&](const StoredMeasurement&) { ++rows; });
  EXPECT_EQ(rows, kThreads * kEach);
  EXPECT_TRUE(db.verify().ok);
}

TEST(Verify, ReportsABestRowThatNamesAFailedMeasurement) {
  Rng r;
  TempDir dir;
  const auto path = dir / "v.db";
  int64_t failed_id = 0;
  {
    ConfigCache db = ConfigCache::open(path);
    const int64_t g = db.upsert_gpu(testing::random_gpu(r));
    const int64_t k = db.upsert_kernel(testing::random_kernel(r));
    const int64_t run = db.begin_run(testing::random_run(r));
    const std::string shape = testing::random_shape(r);
    const auto ids = db.record(
        run, g, k,
        {testing::random_measurement(r, shape, DType::kF16), testing::random_failure(r, shape, DType::kF16)});
    db.set_best(ids[0]);
    failed_id = ids[1];
    EXPECT_TRUE(db.verify().ok);
  }
  {
    // Another program writing the file directly breaks the rule that a winner is an ok measurement.
    detail::Database raw(path, detail::Database::Open::kReadWrite);
    detail::Statement s(raw, "UPDATE best SET measurement_id = ?1");
    s.bind(1, failed_id).run();
  }
  ConfigCache db = ConfigCache::open(path, ConfigCache::Mode::kReadOnly);
  const VerifyReport rep = db.verify();
  EXPECT_FALSE(rep.ok);
  ASSERT_EQ(rep.problems.size(), 1u);
  EXPECT_NE(rep.problems[0].find(std::to_string(failed_id)), std::string::npos) << rep.problems[0];
}

TEST(Verify, ReportsJsonColumnsThatAreNotObjects) {
  Rng r;
  TempDir dir;
  const auto path = dir / "v.db";
  std::vector<int64_t> ids;
  {
    ConfigCache db = ConfigCache::open(path);
    const int64_t g = db.upsert_gpu(testing::random_gpu(r));
    const int64_t k = db.upsert_kernel(testing::random_kernel(r));
    const int64_t run = db.begin_run(testing::random_run(r));
    std::vector<Measurement> ms;
    for (int i = 0; i < 6; ++i)
      ms.push_back(testing::random_measurement(r, testing::random_shape(r), DType::kF32));
    ids = db.record(run, g, k, ms);
    EXPECT_TRUE(db.verify().ok);
  }
  const int64_t bad = ids[static_cast<size_t>(r.uniform(0, 5))];
  {
    detail::Database raw(path, detail::Database::Open::kReadWrite);
    detail::Statement s(raw, "UPDATE measurements SET counters_json = '[1,2' WHERE id = ?1");
    s.bind(1, bad).run();
  }
  ConfigCache db = ConfigCache::open(path, ConfigCache::Mode::kReadOnly);
  const VerifyReport rep = db.verify();
  EXPECT_FALSE(rep.ok);
  ASSERT_EQ(rep.problems.size(), 1u);
  EXPECT_NE(rep.problems[0].find("measurement " + std::to_string(bad)), std::string::npos) << rep.problems[0];
}

TEST(Verify, ReportsAMissingTable) {
  Rng r;
  TempDir dir;
  const auto path = dir / "v.db";
  { ConfigCache db = ConfigCache::open(path); }
  {
    detail::Database raw(path, detail::Database::Open::kReadWrite);
    raw.exec("DROP TABLE compile_cache");
  }
  ConfigCache db = ConfigCache::open(path, ConfigCache::Mode::kReadOnly);
  const VerifyReport rep = db.verify();
  EXPECT_FALSE(rep.ok);
  ASSERT_FALSE(rep.problems.empty());
  EXPECT_NE(rep.problems[0].find("compile_cache"), std::string::npos) << rep.problems[0];
}

}  // namespace
}  // namespace ktune::cache
