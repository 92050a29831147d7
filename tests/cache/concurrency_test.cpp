// Several processes on one database (docs/design.md D7): writers and a reader at once, and a writer
// killed with SIGKILL inside a write transaction. Children report through their exit status.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <thread>

#include "cache/config_cache.hpp"
#include "cache/detail/sqlite_db.hpp"
#include "cache_test_util.hpp"
#include "ktune/error.hpp"

namespace ktune::cache {
namespace {

using testing::Rng;
using testing::TempDir;
namespace fs = std::filesystem;

/// Runs `body` in a child process; the child exits 0 when it returns true, 1 on false or on any
/// exception (printed to stderr).
template <typename Fn>
pid_t spawn(Fn body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  int code = 1;
  try {
    code = body() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child %d: %s\n", ::getpid(), e.what());
  }
  std::fflush(nullptr);
  ::_exit(code);
}

int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(Concurrency, TwoWritersAndAReaderLoseNothing) {
  Rng r;
  SCOPED_TRACE(r.seed());
  TempDir dir;
  const fs::path path = dir / "shared.db";
  const GpuInfo gpu = testing::random_gpu(r);
  const KernelInfo kernel = testing::random_kernel(r);
  {
    ConfigCache db = ConfigCache::open(path);
    db.upsert_gpu(gpu);
    db.upsert_kernel(kernel);
  }
  constexpr int kBatches = 60;
  constexpr int kPerBatch = 5;
  const uint64_t seed = r.gen()();
  const fs::path done_flag = dir / "writers-done";

  const auto writer = [&](int which) {
    return spawn([&, which] {
      Rng wr;
      ConfigCache db = ConfigCache::open(path);
      const int64_t g = db.upsert_gpu(gpu);
      const int64_t k = db.upsert_kernel(kernel);
      const int64_t run = db.begin_run(testing::random_run(wr));
      for (int b = 0; b < kBatches; ++b) {
        std::vector<Measurement> ms;
        for (int i = 0; i < kPerBatch; ++i) {
          Measurement m = testing::random_measurement(wr, testing::random_shape(wr), DType::kBF16);
          m.config_name = fmt::format("w{}.b{}.i{}.{}", which, b, i, seed);
          ms.push_back(m);
        }
        const auto ids = db.record(run, g, k, ms);
        db.set_best(ids[0]);
      }
      return true;
    });
  };
  const pid_t w1 = writer(1);
  const pid_t w2 = writer(2);
  const pid_t reader = spawn([&] {
    ConfigCache db = ConfigCache::open(path, ConfigCache::Mode::kReadOnly);
    int64_t last = 0;
    int reads = 0;
    while (!fs::exists(done_flag) || reads < 10) {
      int64_t n = 0;
      db.for_each_measurement({}, [&](const StoredMeasurement&) { ++n; });
      if (n < last) return false;  // a committed row disappeared
      last = n;
      for (const auto& b : db.list_best()) {
        if (!db.best({b.gpu_name, b.kernel.name, b.shape, b.dtype, std::nullopt, ""}, false)) return false;
      }
      ++reads;
    }
    return true;
  });
  EXPECT_EQ(wait_exit(w1), 0);
  EXPECT_EQ(wait_exit(w2), 0);
  std::ofstream(done_flag) << "done";
  EXPECT_EQ(wait_exit(reader), 0);

  ConfigCache db = ConfigCache::open(path);
  std::set<std::string> names;
  db.for_each_measurement({}, [&](const StoredMeasurement& s) { names.insert(s.m.config_name); });
  EXPECT_EQ(names.size(), size_t{2 * kBatches * kPerBatch});
  for (int w = 1; w <= 2; ++w) {
    for (int b = 0; b < kBatches; ++b) {
      for (int i = 0; i < kPerBatch; ++i) {
        EXPECT_EQ(names.count(fmt::format("w{}.b{}.i{}.{}", w, b, i, seed)), 1u) << w << " " << b << " " << i;
      }
    }
  }
  EXPECT_EQ(db.list_best().size(), size_t{2 * kBatches});
  EXPECT_EQ(db.gpus().size(), 1u);
  EXPECT_TRUE(db.verify().ok);
}

TEST(Concurrency, WriterKilledInsideATransactionLosesNoCommit) {
  Rng r;
  SCOPED_TRACE(r.seed());
  TempDir dir;
  const fs::path path = dir / "killed.db";
  int to_parent[2];
  ASSERT_EQ(::pipe(to_parent), 0);
  const int committed_batches = static_cast<int>(r.uniform(3, 12));
  const pid_t child = spawn([&] {
    ::close(to_parent[0]);
    Rng cr;
    ConfigCache db = ConfigCache::open(path);
    const int64_t g = db.upsert_gpu(testing::random_gpu(cr));
    const int64_t k = db.upsert_kernel(testing::random_kernel(cr));
    const int64_t run = db.begin_run(testing::random_run(cr));
    for (int b = 0; b < committed_batches; ++b) {
      std::vector<Measurement> ms;
      for (int i = 0; i < 20; ++i) {
        Measurement m = testing::random_measurement(cr, testing::random_shape(cr), DType::kF16);
        m.config_name = fmt::format("committed.{}.{}", b, i);
        ms.push_back(m);
      }
      db.set_best(db.record(run, g, k, ms)[0]);
    }
    // A write transaction that never ends: insert rows until killed, telling the parent once it
    // is well inside (rows written, locks held).
    detail::Database raw(path, detail::Database::Open::kReadWrite);
    detail::Transaction tx(raw);
    detail::Statement ins(
        raw,
        "INSERT INTO measurements (run_id, gpu_id, kernel_id, shape, dtype, config_name, outcome,"
        " median_us, measured_at) VALUES (?1, ?2, ?3, 'm=1,n=1,k=1', 'f16', ?4, 'ok', 1.5, 'now')");
    for (int64_t i = 0;; ++i) {
      ins.reset();
      ins.bind(1, run).bind(2, g).bind(3, k).bind(4, fmt::format("doomed.{}", i));
      ins.run();
      if (i == 2000) {
        const char c = 'x';
        if (::write(to_parent[1], &c, 1) != 1) return false;
      }
    }
  });
  ::close(to_parent[1]);
  char c = 0;
  ASSERT_EQ(::read(to_parent[0], &c, 1), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(r.uniform(1, 30)));
  ::kill(child, SIGKILL);
  EXPECT_EQ(wait_exit(child), 128 + SIGKILL);
  ::close(to_parent[0]);

  ConfigCache db = ConfigCache::open(path);
  const VerifyReport rep = db.verify();
  EXPECT_TRUE(rep.ok) << (rep.problems.empty() ? "" : rep.problems[0]);
  std::set<std::string> names;
  db.for_each_measurement({}, [&](const StoredMeasurement& s) { names.insert(s.m.config_name); });
  EXPECT_EQ(names.size(), size_t(committed_batches) * 20);
  for (int b = 0; b < committed_batches; ++b) {
    for (int i = 0; i < 20; ++i) EXPECT_EQ(names.count(fmt::format("committed.{}.{}", b, i)), 1u);
  }
  for (const auto& n : names) EXPECT_EQ(n.rfind("doomed", 0), std::string::npos) << n;
  EXPECT_EQ(db.list_best().size(), size_t(committed_batches));
  // The database takes new writes after the crash.
  Rng r2;
  const int64_t g = db.upsert_gpu(testing::random_gpu(r2));
  EXPECT_GT(g, 0);
}

}  // namespace
}  // namespace ktune::cache
