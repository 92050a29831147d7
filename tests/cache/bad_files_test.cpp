#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cache/config_cache.hpp"
#include "cache/detail/sqlite_db.hpp"
#include "cache_test_util.hpp"
#include "ktune/error.hpp"

namespace ktune::cache {
namespace {

using testing::Rng;
using testing::TempDir;
namespace fs = std::filesystem;

/// Opens `path` in `mode` and returns the error kind and message; fails the test when it opens.
std::pair<ErrorKind, std::string> open_error(const fs::path& path, ConfigCache::Mode mode) {
  try {
    ConfigCache db = ConfigCache::open(path, mode);
    ADD_FAILURE() << "opened " << path;
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  return {ErrorKind::kRuntime, ""};
}

/// A closed database with some random rows (closing checkpoints the WAL into the main file).
void make_db(const fs::path& path, Rng& r, int rows) {
  ConfigCache db = ConfigCache::open(path);
  const int64_t gpu = db.upsert_gpu(testing::random_gpu(r));
  const int64_t kernel = db.upsert_kernel(testing::random_kernel(r));
  const int64_t run = db.begin_run(testing::random_run(r));
  std::vector<Measurement> ms;
  for (int i = 0; i < rows; ++i)
    ms.push_back(testing::random_measurement(r, testing::random_shape(r), DType::kBF16));
  db.record(run, gpu, kernel, ms);
}

TEST(BadFiles, NewerSchemaIsRefusedAndFileUnchanged) {
  Rng r;
  TempDir dir;
  const fs::path path = dir / "newer.db";
  make_db(path, r, 50);
  {
    detail::Database raw(path, detail::Database::Open::kReadWrite);
    raw.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1));
  }
  const std::string before = testing::file_bytes(path);
  for (const auto mode : {ConfigCache::Mode::kReadWrite, ConfigCache::Mode::kReadOnly}) {
    const auto [kind, msg] = open_error(path, mode);
    EXPECT_EQ(kind, ErrorKind::kBadInput);
    EXPECT_NE(msg.find("newer"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(kSchemaVersion + 1)), std::string::npos) << msg;
  }
  EXPECT_EQ(testing::file_bytes(path), before);
}

TEST(BadFiles, RandomBytesAreNotADatabaseAndStayUnchanged) {
  Rng r;
  TempDir dir;
  const fs::path path = dir / "random.db";
  std::string bytes;
  for (int i = 0; i < 8192; ++i) bytes += static_cast<char>(r.uniform(1, 255));
  std::ofstream(path, std::ios::binary) << bytes;
  for (const auto mode : {ConfigCache::Mode::kReadWrite, ConfigCache::Mode::kReadOnly}) {
    const auto [kind, msg] = open_error(path, mode);
    EXPECT_EQ(kind, ErrorKind::kBadInput);
    EXPECT_NE(msg.find("not an SQLite database"), std::string::npos) << msg;
  }
  EXPECT_EQ(testing::file_bytes(path), bytes);
}

TEST(BadFiles, TextFileIsNotADatabase) {
  TempDir dir;
  const fs::path path = dir / "notes.txt";
  std::ofstream(path) << "these are my notes, not a database\n";
  EXPECT_EQ(open_error(path, ConfigCache::Mode::kReadWrite).first, ErrorKind::kBadInput);
  EXPECT_EQ(testing::file_bytes(path), "these are my notes, not a database\n");
}

TEST(BadFiles, ForeignSqliteDatabaseIsRefused) {
  TempDir dir;
  const fs::path path = dir / "other.db";
  {
    detail::Database raw(path, detail::Database::Open::kReadWriteCreate);
    raw.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('x')");
  }
  const std::string before = testing::file_bytes(path);
  const auto [kind, msg] = open_error(path, ConfigCache::Mode::kReadWrite);
  EXPECT_EQ(kind, ErrorKind::kBadInput);
  EXPECT_NE(msg.find("not a ktune"), std::string::npos) << msg;
  EXPECT_EQ(testing::file_bytes(path), before);
}

TEST(BadFiles, TruncatedDatabaseIsBadInput) {
  Rng r;
  TempDir dir;
  const fs::path path = dir / "cut.db";
  make_db(path, r, 3000);
  const std::string full = testing::file_bytes(path);
  ASSERT_GT(full.size(), 8192u);
  for (const size_t keep : {full.size() / 2, size_t{4096 + 17}, size_t{60}}) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << full.substr(0, keep);
    const auto [kind, msg] = open_error(path, ConfigCache::Mode::kReadWrite);
    EXPECT_EQ(kind, ErrorKind::kBadInput) << keep;
    EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
    EXPECT_EQ(testing::file_bytes(path), full.substr(0, keep));
  }
}

TEST(BadFiles, CorruptPagesFailVerifyOrOpenCleanly) {
  Rng r;
  TempDir dir;
  const fs::path path = dir / "corrupt.db";
  make_db(path, r, 3000);
  std::string bytes = testing::file_bytes(path);
  // Scribble over the middle of the file (not the header): pages of measurements.
  for (size_t i = bytes.size() / 3; i < bytes.size() / 3 + 8192; ++i)
    bytes[i] = static_cast<char>(r.uniform(1, 255));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  try {
    ConfigCache db = ConfigCache::open(path, ConfigCache::Mode::kReadOnly);
    const VerifyReport rep = db.verify();
    EXPECT_FALSE(rep.ok);
    EXPECT_FALSE(rep.problems.empty());
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
  }
}

TEST(BadFiles, UnwritableLocationIsRuntime) {
  TempDir dir;
  std::ofstream(dir / "plain-file") << "x";
  auto [kind, msg] = open_error(dir / "plain-file/sub/ktune.db", ConfigCache::Mode::kReadWrite);
  EXPECT_EQ(kind, ErrorKind::kRuntime) << msg;
  std::tie(kind, msg) = open_error("/proc/ktune-test-no-such/ktune.db", ConfigCache::Mode::kReadWrite);
  EXPECT_EQ(kind, ErrorKind::kRuntime) << msg;
}

TEST(BadFiles, ReadOnlyFolderIsRuntime) {
  TempDir dir;
  const fs::path ro = dir / "ro";
  fs::create_directories(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  if (::access(ro.c_str(), W_OK) == 0) {
    GTEST_SKIP() << "running with privileges that ignore folder permissions (root); "
                    "UnwritableLocationIsRuntime covers the error path";
  }
  const auto [kind, msg] = open_error(ro / "ktune.db", ConfigCache::Mode::kReadWrite);
  EXPECT_EQ(kind, ErrorKind::kRuntime) << msg;
  EXPECT_FALSE(fs::exists(ro / "ktune.db"));
}

TEST(BadFiles, WriteProtectedFileIsRuntimeOnReadWriteOpenAndReadableReadOnly) {
  Rng r;
  TempDir dir;
  const fs::path path = dir / "locked.db";
  make_db(path, r, 20);
  fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  if (::access(path.c_str(), W_OK) == 0) {
    GTEST_SKIP() << "running with privileges that ignore file permissions (root)";
  }
  const std::string before = testing::file_bytes(path);
  const auto [kind, msg] = open_error(path, ConfigCache::Mode::kReadWrite);
  EXPECT_EQ(kind, ErrorKind::kRuntime) << msg;
  EXPECT_NE(msg.find("write-protected"), std::string::npos) << msg;
  ConfigCache ro = ConfigCache::open(path, ConfigCache::Mode::kReadOnly);
  int rows = 0;
  ro.for_each_measurement({}, [&](const StoredMeasurement&) { ++rows; });
  EXPECT_EQ(rows, 20);
  EXPECT_EQ(testing::file_bytes(path), before);
}

TEST(BadFiles, DatabaseInReadOnlyFolderCanBeRead) {
  Rng r;
  TempDir dir;
  const fs::path ro = dir / "ro";
  fs::create_directories(ro);
  make_db(ro / "shared.db", r, 30);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  if (::access(ro.c_str(), W_OK) == 0) {
    GTEST_SKIP() << "running with privileges that ignore folder permissions (root)";
  }
  ConfigCache db = ConfigCache::open(ro / "shared.db", ConfigCache::Mode::kReadOnly);
  int rows = 0;
  db.for_each_measurement({}, [&](const StoredMeasurement&) { ++rows; });
  EXPECT_EQ(rows, 30);
  EXPECT_TRUE(db.verify().ok);
  EXPECT_EQ(open_error(ro / "shared.db", ConfigCache::Mode::kReadWrite).first, ErrorKind::kRuntime);
}

TEST(BadFiles, ReadOnlyOpenOfMissingFileIsNotFound) {
  TempDir dir;
  EXPECT_EQ(open_error(dir / "missing.db", ConfigCache::Mode::kReadOnly).first, ErrorKind::kNotFound);
  EXPECT_FALSE(fs::exists(dir / "missing.db"));
}

TEST(BadFiles, DirectoryIsBadInput) {
  TempDir dir;
  EXPECT_EQ(open_error(dir.path(), ConfigCache::Mode::kReadWrite).first, ErrorKind::kBadInput);
}

TEST(BadFiles, SqliteErrorsCarryTheirNameAndPlace) {
  TempDir dir;
  detail::Database raw(dir / "x.db", detail::Database::Open::kReadWriteCreate);
  try {
    raw.exec("SELECT * FROM no_such_table");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.api_code(), "SQLITE_ERROR");
    EXPECT_NE(std::string(e.what()).find("no_such_table"), std::string::npos) << e.what();
    EXPECT_NE(e.where().find("sqlite_db.cpp:"), std::string::npos) << e.where();
  }
  EXPECT_EQ(detail::sqlite_code_name(5), "SQLITE_BUSY");
  EXPECT_EQ(detail::sqlite_code_name(26), "SQLITE_NOTADB");
  EXPECT_EQ(detail::sqlite_code_name(5 | (1 << 8)), "SQLITE_BUSY");  // SQLITE_BUSY_RECOVERY
}

TEST(BadFiles, EmptyFileBecomesADatabase) {
  TempDir dir;
  std::ofstream(dir / "empty.db");
  ConfigCache db = ConfigCache::open(dir / "empty.db");
  EXPECT_EQ(db.schema_version(), kSchemaVersion);
  EXPECT_TRUE(db.verify().ok);
}

}  // namespace
}  // namespace ktune::cache
