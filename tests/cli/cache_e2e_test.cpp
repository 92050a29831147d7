// `ktune cache list|export|import|merge|prune|verify|migrate` end to end on databases the tests make.

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/detail/sqlite_db.hpp"
#include "tests/cli/ktune_runner.hpp"
#include "tests/cli/test_db_fixture.hpp"

namespace ktune::testing {
namespace {

using Row = std::tuple<std::string, std::string, std::string, std::string, std::string, double>;

/// The `cache list --json` rows of `db` as (gpu, kernel, shape, dtype, config, median).
std::set<Row> listed(const std::filesystem::path& db) {
  const auto r = run_ktune({"cache", "list", "--db", db.string(), "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("count").get<size_t>(), j.at("best").size());
  std::set<Row> rows;
  for (const auto& b : j.at("best")) {
    rows.emplace(b.at("gpu"), b.at("kernel"), b.at("tuned_shape"), b.at("dtype"), b.at("config_name"),
                 b.at("median_us"));
  }
  return rows;
}

std::set<Row> expected(const TestDb& db) {
  std::set<Row> rows;
  for (const auto& b : db.best) rows.emplace(b.gpu, b.kernel, b.shape, b.dtype, b.config_name, b.median_us);
  return rows;
}

class CacheCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = std::random_device{}();
    db_ = make_test_db(tmp_ / "a.db", seed_);
  }
  TempDir tmp_;
  uint32_t seed_ = 0;
  TestDb db_;
};

TEST_F(CacheCommandTest, ListShowsEveryWinner) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  EXPECT_EQ(listed(db_.path), expected(db_));

  const auto human = run_ktune({"cache", "list", "--db", db_.path.string()});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  for (const auto& b : db_.best) EXPECT_NE(human.out.find(b.config_name), std::string::npos) << human.out;

  const auto filtered =
      run_ktune({"cache", "list", "--db", db_.path.string(), "--kernel", "rmsnorm", "--json"});
  ASSERT_EQ(filtered.exit_code, 0) << filtered.err;
  const auto j = nlohmann::json::parse(filtered.out);
  ASSERT_EQ(j.at("best").size(), 1u);
  EXPECT_EQ(j.at("best")[0].at("kernel"), "rmsnorm");

  const auto f16 = run_ktune({"cache", "list", "--db", db_.path.string(), "--dtype", "f16", "--json"});
  ASSERT_EQ(f16.exit_code, 0) << f16.err;
  ASSERT_EQ(nlohmann::json::parse(f16.out).at("best").size(), 1u);
  const auto bad = run_ktune({"cache", "list", "--db", db_.path.string(), "--dtype", "f64"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("unknown dtype 'f64'"), std::string::npos) << bad.err;
}

TEST_F(CacheCommandTest, ExportThenImportKeepsEveryWinner) {
  const auto out = tmp_ / "export.json";
  const auto ex = run_ktune({"cache", "export", "--out", out.string(), "--db", db_.path.string(), "--json"});
  ASSERT_EQ(ex.exit_code, 0) << ex.err;
  EXPECT_EQ(nlohmann::json::parse(ex.out).at("out"), out.string());
  std::ifstream in(out);
  EXPECT_NO_THROW((void)nlohmann::json::parse(in)) << "the export is one JSON document";

  const auto fresh = tmp_ / "imported.db";
  const auto im = run_ktune({"cache", "import", out.string(), "--db", fresh.string(), "--json"});
  ASSERT_EQ(im.exit_code, 0) << im.err;
  EXPECT_EQ(nlohmann::json::parse(im.out).at("measurements_added").get<int64_t>(), db_.measurements);
  EXPECT_EQ(listed(fresh), expected(db_));

  const auto again = run_ktune({"cache", "import", out.string(), "--db", fresh.string(), "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto j = nlohmann::json::parse(again.out);
  EXPECT_EQ(j.at("measurements_added").get<int64_t>(), 0);
  EXPECT_EQ(j.at("measurements_skipped").get<int64_t>(), db_.measurements);
}

TEST_F(CacheCommandTest, AFailedImportIntoANewDatabaseLeavesNoFileBehind) {
  const auto not_json = tmp_ / "not-json.db";
  std::filesystem::copy_file(db_.path, not_json);  // an SQLite file, not an export
  const auto fresh = tmp_ / "new.db";
  const auto im = run_ktune({"cache", "import", not_json.string(), "--db", fresh.string()});
  EXPECT_EQ(im.exit_code, 2) << im.err;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    EXPECT_FALSE(std::filesystem::exists(fresh.string() + suffix))
        << fresh.string() + suffix << " was left behind";
  }
  // An existing database is kept as it was.
  const auto before = listed(db_.path);
  EXPECT_NE(run_ktune({"cache", "import", not_json.string(), "--db", db_.path.string()}).exit_code, 0);
  EXPECT_EQ(listed(db_.path), before);
}

TEST_F(CacheCommandTest, MergeUnitesDatabasesAndSkipsDuplicates) {
  const auto other = make_test_db(tmp_ / "b.db", seed_ + 1, " (b)");
  const auto all = tmp_ / "all.db";
  const auto m =
      run_ktune({"cache", "merge", db_.path.string(), other.path.string(), "--db", all.string(), "--json"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const auto j = nlohmann::json::parse(m.out);
  EXPECT_EQ(j.at("measurements_added").get<int64_t>(), db_.measurements + other.measurements);
  EXPECT_EQ(j.at("sources").size(), 2u);

  auto want = expected(db_);
  const auto want_b = expected(other);
  want.insert(want_b.begin(), want_b.end());
  EXPECT_EQ(listed(all), want);

  const auto again = run_ktune({"cache", "merge", other.path.string(), "--db", all.string(), "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out).at("measurements_added").get<int64_t>(), 0);
  EXPECT_EQ(listed(all), want);
}

TEST_F(CacheCommandTest, MergeOfAMissingSourceIsAUsageError) {
  const auto r = run_ktune({"cache", "merge", (tmp_ / "nope.db").string(), "--db", db_.path.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(listed(db_.path), expected(db_));
}

TEST_F(CacheCommandTest, MergeIntoItselfIsRefused) {
  const auto r = run_ktune({"cache", "merge", db_.path.string(), "--db", db_.path.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("itself"), std::string::npos) << r.err;
}

TEST_F(CacheCommandTest, PruneRemovesKernelsWhoseTemplateChanged) {
  // The fixture's template hashes are random, so every kernel with a built-in template is stale
  // and every kernel without one is kept.
  const auto r = run_ktune({"cache", "prune", "--db", db_.path.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& current = j.at("current_hashes");
  std::set<Row> kept;
  std::set<std::string> stale_kernels;
  int64_t stale_measurements = 0;
  for (const auto& b : db_.best) {
    if (current.contains(b.kernel)) {
      stale_kernels.insert(b.kernel);
      stale_measurements += 4;  // make_test_db writes four configs a key
    } else {
      kept.emplace(b.gpu, b.kernel, b.shape, b.dtype, b.config_name, b.median_us);
    }
  }
  EXPECT_EQ(j.at("kernels_removed").get<size_t>(), stale_kernels.size());
  EXPECT_EQ(j.at("measurements_removed").get<int64_t>(), stale_measurements);
  EXPECT_EQ(listed(db_.path), kept);
  for (const auto& [kernel, hash] : current.items()) {
    EXPECT_NE(r.err.find(kernel + ": " + hash.get<std::string>()), std::string::npos) << r.err;
  }

  const auto again = run_ktune({"cache", "prune", "--db", db_.path.string(), "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out).at("measurements_removed").get<int64_t>(), 0);
  EXPECT_EQ(listed(db_.path), kept);
}

TEST_F(CacheCommandTest, VerifyPassesOnAGoodDatabase) {
  const auto r = run_ktune({"cache", "verify", "--db", db_.path.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("ok"), true);
  EXPECT_EQ(j.at("schema_version"),
            4);  // cache::kSchemaVersion: 2 added measurements.verified, 3 the jobs table, 4 the work columns
  EXPECT_TRUE(j.at("problems").empty());
}

// A database written by the version before the work columns (schema 3): read-only commands refuse
// it naming the command that migrates it; `cache migrate` does, once, and keeps every winner.
TEST_F(CacheCommandTest, MigrateBringsAnOlderSchemaUpAndReadOnlyCommandsNameIt) {
  const auto before = expected(db_);
  {
    cache::detail::Database raw(db_.path, cache::detail::Database::Open::kReadWrite);
    raw.exec("ALTER TABLE measurements DROP COLUMN work_flops");
    raw.exec("ALTER TABLE measurements DROP COLUMN work_bytes");
    raw.exec("PRAGMA user_version = 3");
  }
  const auto refused = run_ktune({"report", "--db", db_.path.string(), "--format", "csv", "--out", "-"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("schema version 3"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("ktune cache migrate --db " + db_.path.string()), std::string::npos)
      << refused.err;

  const auto m = run_ktune({"cache", "migrate", "--db", db_.path.string(), "--json"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const auto j = nlohmann::json::parse(m.out);
  EXPECT_EQ(j.at("schema_version_before"), 3);
  EXPECT_EQ(j.at("schema_version"), 4);
  EXPECT_EQ(j.at("migrated"), true);
  EXPECT_EQ(listed(db_.path), before);

  const auto again = run_ktune({"cache", "migrate", "--db", db_.path.string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("already at schema version 4"), std::string::npos) << again.out;
  EXPECT_EQ(run_ktune({"report", "--db", db_.path.string(), "--format", "csv", "--out", "-"}).exit_code, 0);

  const auto missing = run_ktune({"cache", "migrate", "--db", (tmp_ / "nope.db").string()});
  EXPECT_EQ(missing.exit_code, 4) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(tmp_ / "nope.db"));
}

TEST_F(CacheCommandTest, VerifyOfAFileThatIsNotADatabaseExits2) {
  const auto bogus = tmp_ / "bogus.db";
  std::mt19937 gen(seed_);
  std::ofstream(bogus, std::ios::binary) << "this is not SQLite " << gen() << std::string(5000, 'x');
  const auto r = run_ktune({"cache", "verify", "--db", bogus.string(), "--json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("ok"), false);
  EXPECT_FALSE(j.at("problems").empty());
  EXPECT_NE(r.err.find("ktune: error:"), std::string::npos);
}

TEST_F(CacheCommandTest, VerifyOfACorruptedDatabaseExits2) {
  // Overwrite every page after the first (the schema) with random bytes: the header still says
  // SQLite, the tables are garbage.
  const auto size = std::filesystem::file_size(db_.path);
  ASSERT_GT(size, 8192u) << "fixture too small to corrupt past its first page";
  std::mt19937 gen(seed_);
  {
    std::fstream f(db_.path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096);
    for (uintmax_t i = 4096; i < size; ++i) f.put(static_cast<char>(gen() & 0xff));
  }
  const auto r = run_ktune({"cache", "verify", "--db", db_.path.string()});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("ktune: error:"), std::string::npos) << r.err;
}

TEST_F(CacheCommandTest, ReadOnlyCommandsOnAMissingDatabaseExit4) {
  const auto missing = (tmp_ / "missing.db").string();
  for (const auto& cmd : {"list", "verify"}) {
    const auto r = run_ktune({"cache", cmd, "--db", missing});
    EXPECT_EQ(r.exit_code, 4) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("no database at"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(missing));
}

}  // namespace
}  // namespace ktune::testing
