// The database under faults: an export import, a merge and a sweep's commits meet a
// full disk, a file that cannot be written, and another writer that holds the lock longer than the
// busy timeout (10 s). Each fails with a clear error (the CLI exits 1; the API throws
// ktune::Error(kRuntime)), commits nothing half-way, and leaves a file that passes
// `ktune cache verify`; a sweep resumes afterwards without measuring anything twice.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <set>

#include "kernel_templates/embedded_sources.hpp"
#include "tests/cache/cache_test_util.hpp"
#include "tests/cli/test_db_fixture.hpp"
#include "tests/hardening/fault_injection.hpp"
#include "tests/tuner/loop_test_util.hpp"
#include "tuner/inputs/shape_set.hpp"
#include "tuner/loop/tuning_loop.hpp"

namespace ktune::hardening {
namespace {

namespace fs = std::filesystem;
using testing::run_ktune;
using testing::RunResult;

const cache::GpuInfo kSweepGpu{"Fault GPU", 9, 0, 132, int64_t{141} << 30, "{}"};
constexpr int kBusyTimeoutS = 10;  // cache/config_cache.cpp kBusyTimeoutMs

/// A database of `rows` random measurements over a few keys (about 0.5 KB a row).
void make_source(const fs::path& path, int rows) {
  cache::testing::Rng rng;
  auto db = cache::ConfigCache::open(path);
  const int64_t gpu = db.upsert_gpu(cache::testing::random_gpu(rng));
  const int64_t kernel = db.upsert_kernel(cache::testing::random_kernel(rng));
  const int64_t run = db.begin_run(cache::testing::random_run(rng));
  std::vector<cache::Measurement> batch;
  for (int i = 0; i < rows; ++i) {
    const std::string shape = fmt::format("m={},n=4096,k=4096", 1 + i % 16);
    batch.push_back(i % 5 == 0 ? cache::testing::random_failure(rng, shape, DType::kBF16)
                               : cache::testing::random_measurement(rng, shape, DType::kBF16));
  }
  db.record(run, gpu, kernel, batch);
}

int64_t measurement_count(const fs::path& path) {
  const auto db = cache::ConfigCache::open(path, cache::ConfigCache::Mode::kReadOnly);
  int64_t n = 0;
  db.for_each_measurement({}, [&](const cache::StoredMeasurement&) { ++n; });
  return n;
}

/// The file passes the API's verify and `ktune cache verify`.
void expect_verified(const fs::path& path) {
  {
    const auto db = cache::ConfigCache::open(path, cache::ConfigCache::Mode::kReadOnly);
    const cache::VerifyReport report = db.verify();
    EXPECT_TRUE(report.ok) << path << ": " << (report.problems.empty() ? "" : report.problems.front());
  }
  const RunResult r = run_ktune({"cache", "verify", "--db", path.string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

/// A target database (the CLI fixture) and a larger source, as a database and as an export.
struct Files {
  testing::TempDir dir;
  fs::path target = dir / "target.db";
  fs::path source = dir / "source.db";
  fs::path export_file = dir / "source.json";
  int64_t target_rows = 0;

  Files() {
    testing::make_test_db(target, static_cast<uint32_t>(::getpid()) | 1u);
    make_source(source, 3000);
    cache::ConfigCache::open(source, cache::ConfigCache::Mode::kReadOnly).export_json(export_file);
    target_rows = measurement_count(target);
  }
  std::vector<std::string> import_args() const {
    return {"cache", "import", export_file.string(), "--db", target.string()};
  }
  std::vector<std::string> merge_args() const {
    return {"cache", "merge", source.string(), "--db", target.string()};
  }
};

// ---- the tuning loop with a fake compiler and measurer --------------------------------------

tuner::TuneOptions sweep_options() {
  tuner::TuneOptions o;
  o.strategy = "exhaustive";
  o.budget = 200;
  o.compile_threads = 2;
  o.counters = false;
  return o;
}

const tuner::TuneKey kSweepKey{"gemm", tuner::NamedShape{"fault", {{"m", 64}, {"n", 1024}, {"k", 2048}}},
                               DType::kBF16, "nt"};

/// Runs the sweep on `db`; `before_measure` as FakeMeasurer's. Returns the configs measured.
std::vector<std::string> sweep(cache::ConfigCache& db, std::function<void(int)> before_measure = {},
                               const std::function<void()>& after_start = {}) {
  static const auto sources = kernel_templates::SourceLibrary::builtin();
  tuner::test::FakeMeasurer measurer;
  measurer.before_measure = std::move(before_measure);
  tuner::LoopDeps deps{tuner::test::fake_compile(), &measurer, &sources, nullptr};
  tuner::TuningLoop loop(db, kSweepGpu, cache::RunInfo{}, sweep_options(), deps);
  if (after_start) after_start();
  const auto summary =
      loop.tune(tuner::ConfigSpace::load(tuner::configs_dir() / "spaces" / "gemm.toml"), kSweepKey);
  if (!summary.error.empty()) throw Error(ErrorKind::kRuntime, summary.error);
  return measurer.measured;
}

/// The child's exit status for a sweep that ended with `e`: 1 for kRuntime (what a failed commit
/// must be), 10 + kind otherwise.
int status_of(const Error& e) {
  std::fprintf(stderr, "sweep stopped: %s\n", e.what());
  return e.kind() == ErrorKind::kRuntime ? 1 : 10 + static_cast<int>(e.kind());
}

/// The configs measured on the (fake) GPU that the database holds.
std::set<std::string> measured_rows(const fs::path& path) {
  auto db = cache::ConfigCache::open(path, cache::ConfigCache::Mode::kReadOnly);
  std::set<std::string> names;
  for (const auto& r : tuner::test::all_measurements(db)) {
    if (r.m.outcome == Outcome::kOk || r.m.outcome == Outcome::kIncorrect) {
      EXPECT_TRUE(names.insert(r.m.config_name).second) << r.m.config_name << " stored twice";
      EXPECT_EQ(r.m.outcome == Outcome::kOk, r.m.stats.has_value()) << r.m.config_name;
    }
  }
  return names;
}

/// After a sweep stopped by a fault: the file verifies, and a second sweep finishes the key
/// without measuring a stored config again.
void expect_sweep_resumes(const fs::path& path, const std::set<std::string>& stored) {
  expect_verified(path);
  auto db = cache::ConfigCache::open(path);
  const std::vector<std::string> resumed = sweep(db);
  for (const auto& name : resumed) EXPECT_EQ(stored.count(name), 0u) << name << " was measured again";
  EXPECT_FALSE(resumed.empty());
}

// ---- a full disk -----------------------------------------------------------------------------

/// Room for the -shm file (32 KiB) and a few pages more than the database holds: far less than a
/// 3000-row import or merge writes, more than opening the database needs.
uint64_t almost_full(const fs::path& db) {
  return std::max<uint64_t>(largest_file_size(db), 32 << 10) + (64 << 10);
}

TEST(FullDisk, ImportAndMergeFailWithExit1AndChangeNothing) {
  Files f;
  const uint64_t limit = almost_full(f.target);
  for (const auto& args : {f.import_args(), f.merge_args()}) {
    const RunResult r = run_ktune_with_fault(args, [&] { return limit_file_size(limit); });
    ASSERT_NE(r.exit_code, kCannotInject) << "setrlimit failed";
    EXPECT_EQ(r.exit_code, 1) << args[1] << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(f.target.string()), std::string::npos) << r.err;   // says which database
    EXPECT_NE(r.err.find("is the disk full"), std::string::npos) << r.err;  // and what it likely means
    EXPECT_EQ(measurement_count(f.target), f.target_rows) << args[1] << " committed part of its rows";
    expect_verified(f.target);
  }
  // Without the limit both go through: the fault, not the files, stopped them.
  EXPECT_EQ(run_ktune(f.import_args()).exit_code, 0);
  EXPECT_EQ(measurement_count(f.target), f.target_rows + 3000);
}

TEST(FullDisk, ASweepStopsWithARuntimeErrorAndResumes) {
  testing::TempDir dir;
  const fs::path path = dir / "sweep.db";
  const int status = in_child([&] {
    auto db = cache::ConfigCache::open(path);
    try {
      // Room for a few dozen commits of one measurement each, not for 200.
      sweep(db, {}, [&] { limit_file_size(largest_file_size(path) + (192 << 10)); });
      return 0;
    } catch (const Error& e) {
      return status_of(e);
    }
  });
  ASSERT_EQ(status, 1) << "the sweep should stop with ktune::Error(kRuntime) when the disk is full";
  const std::set<std::string> stored = measured_rows(path);
  EXPECT_FALSE(stored.empty()) << "nothing was committed before the disk filled";
  expect_sweep_resumes(path, stored);
}

// ---- a database that cannot be written -------------------------------------------------------

TEST(ReadOnlyDatabase, ImportMergeAndSweepFailWithExit1AndLeaveTheFileAlone) {
  Files f;
  const std::string before = fingerprint(f.target);
  for (const auto& args : {f.import_args(), f.merge_args()}) {
    const RunResult r = run_ktune_with_fault(args, [&] { return read_only_bind(f.dir.path()); });
    if (r.exit_code == kCannotInject) GTEST_SKIP() << "no read-only bind mount here (needs CAP_SYS_ADMIN)";
    EXPECT_EQ(r.exit_code, 1) << args[1] << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("cannot write the database"), std::string::npos) << r.err;
  }
  const int status = in_child([&] {
    if (!read_only_bind(f.dir.path())) return kCannotInject;
    try {
      auto db = cache::ConfigCache::open(f.target);
      sweep(db);
      return 0;
    } catch (const Error& e) {
      return status_of(e);
    }
  });
  EXPECT_EQ(status, 1);
  EXPECT_EQ(fingerprint(f.target), before);
  expect_verified(f.target);
}

TEST(ReadOnlyDatabase, AReadOnlyOpenRefusesEveryWrite) {
  Files f;
  const std::string before = fingerprint(f.target);
  {
    auto db = cache::ConfigCache::open(f.target, cache::ConfigCache::Mode::kReadOnly);
    const auto expect_runtime_error = [](const std::function<void()>& write, const char* what) {
      try {
        write();
        ADD_FAILURE() << what << " wrote to a read-only database";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kRuntime) << what << ": " << e.what();
        EXPECT_NE(std::string(e.what()).find("read-only"), std::string::npos) << e.what();
      }
    };
    expect_runtime_error([&] { db.import_json(f.export_file); }, "import");
    expect_runtime_error([&] { db.merge(f.source); }, "merge");
    expect_runtime_error([&] { sweep(db); }, "a sweep");
  }
  EXPECT_EQ(fingerprint(f.target), before);
  expect_verified(f.target);
}

// ---- another writer holds the lock longer than the busy timeout ------------------------------

TEST(LockedDatabase, ImportAndMergeWaitOutTheBusyTimeoutThenExit1) {
  Files f;
  const auto start = std::chrono::steady_clock::now();
  RunResult import_result;
  RunResult merge_result;
  {
    WriteLockHolder lock(f.target);
    auto import_done = std::async(std::launch::async, [&] { return run_ktune(f.import_args()); });
    auto merge_done = std::async(std::launch::async, [&] { return run_ktune(f.merge_args()); });
    import_result = import_done.get();
    merge_result = merge_done.get();
    EXPECT_EQ(lock.release(), 0);
  }
  const auto waited = std::chrono::steady_clock::now() - start;
  for (const RunResult* r : {&import_result, &merge_result}) {
    EXPECT_EQ(r->exit_code, 1) << r->out << r->err;
    EXPECT_NE(r->err.find("locked"), std::string::npos) << r->err;
  }
  EXPECT_GE(waited, std::chrono::seconds(kBusyTimeoutS)) << "gave up before the busy timeout";
  EXPECT_EQ(measurement_count(f.target), f.target_rows);
  expect_verified(f.target);
}

TEST(LockedDatabase, ASweepStopsAtTheCommitAfterTheLockAndResumes) {
  testing::TempDir dir;
  const fs::path path = dir / "sweep.db";
  constexpr int kLockAt = 5;  // the 6th measurement finds the database locked
  int ask[2];
  int answer[2];
  ASSERT_EQ(::pipe(ask), 0);
  ASSERT_EQ(::pipe(answer), 0);
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = start_child([&] {
    auto db = cache::ConfigCache::open(path);
    try {
      sweep(db, [&](int calls) {
        if (calls != kLockAt) return;
        char byte = 1;
        if (::write(ask[1], &byte, 1) != 1 || ::read(answer[0], &byte, 1) != 1) std::_Exit(20);
      });
      return 0;
    } catch (const Error& e) {
      return status_of(e);
    }
  });
  ::close(ask[1]);  // a child that dies early ends the read below
  ::close(answer[0]);
  char byte = 0;
  ASSERT_EQ(::read(ask[0], &byte, 1), 1);  // the child asks for the lock before its 6th measurement
  {
    WriteLockHolder lock(path);
    ASSERT_EQ(::write(answer[1], &byte, 1), 1);
    EXPECT_EQ(wait_child(child), 1) << "the sweep should stop with ktune::Error(kRuntime) on SQLITE_BUSY";
    EXPECT_EQ(lock.release(), 0);
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::seconds(kBusyTimeoutS));
  ::close(ask[0]);
  ::close(answer[1]);
  const std::set<std::string> stored = measured_rows(path);
  EXPECT_EQ(stored.size(), static_cast<size_t>(kLockAt)) << "every measurement before the lock, none after";
  expect_sweep_resumes(path, stored);
}

}  // namespace
}  // namespace ktune::hardening
