// `ktune tune --kernel-dir` end to end on this machine (NVRTC, no GPU): a compile-only sweep of each
// shipped user kernel (examples/byo/: transpose, layernorm, gather) stores every config's resources under the
// user kernel's name and hash and answers a second run from the database; an edit of either file is a new
// kernel hash (nothing answered from the old results); a compile error is stored with NVRTC's log naming the
// user's line; a fill that gives only zeros for a shape is named; query and report know the kernel through
// --kernel-dir (the report shows the description's work model); a description error exits 2 naming the file
// and line.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "tests/cli/ktune_runner.hpp"
#include "tests/tuner/loop_test_util.hpp"

namespace ktune::tuner {
namespace {

using testing::run_ktune;

const std::filesystem::path kExamples = std::filesystem::path(KTUNE_TEST_SOURCE_DIR) / "examples" / "byo";

std::vector<std::string> compile_only(const std::filesystem::path& dir, const std::string& kernel,
                                      const std::string& shape, const std::string& db,
                                      const std::string& budget) {
  return {"tune",       "--kernel-dir",      dir.string(), "--kernel",       kernel,   "--shape",
          shape,        "--dtype",           "f32",        "--compile-only", "--arch", "sm_90",
          "--strategy", "exhaustive",        "--budget",   budget,           "--db",   db,
          "--json",     "--compile-threads", "2"};
}

TEST(ByoTune, CompileOnlySweepOfTransposeStoresEveryConfigAndResumes) {
  test::TempDir dir;
  const std::string db_path = (dir / "byo.db").string();
  const auto args = compile_only(kExamples / "transpose", "transpose", "rows=1000,cols=777", db_path, "100");
  const auto first = run_ktune(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto doc = nlohmann::json::parse(first.out);
  ASSERT_EQ(doc.at("keys").size(), 1u) << first.out;
  // TILE {16,32,64} x ROWS {1,2,4,8,16}: every point divides and fits 1024 threads.
  EXPECT_EQ(doc.at("keys")[0].at("evaluations"), 15) << first.out;
  {
    auto db = cache::ConfigCache::open(db_path, cache::ConfigCache::Mode::kReadOnly);
    const auto rows = test::all_measurements(db);
    ASSERT_EQ(rows.size(), 15u);
    for (const auto& r : rows) {
      EXPECT_EQ(r.kernel.name, "transpose");
      EXPECT_EQ(r.m.outcome, ktune::Outcome::kSkipped) << r.m.config_name << ": " << r.m.reason;
      EXPECT_EQ(r.m.reason, "compile-only");
      EXPECT_EQ(r.m.config_name.rfind("transpose.f32.tile", 0), 0u) << r.m.config_name;
      const auto res = nlohmann::json::parse(r.m.resources_json);
      EXPECT_GT(res.at("registers").get<int>(), 0) << r.m.resources_json;
    }
  }
  const auto second = run_ktune(args);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(nlohmann::json::parse(second.out).at("keys")[0].at("from_cache"), 15) << second.out;
}

TEST(ByoTune, CompileOnlySweepOfLayerNorm) {
  test::TempDir dir;
  const auto r = run_ktune(compile_only(kExamples / "layernorm", "layernorm", "rows=64,hidden=4096",
                                        (dir / "ln.db").string(), "4"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc.at("keys")[0].at("evaluations"), 4) << r.out;
  auto db = cache::ConfigCache::open(dir / "ln.db", cache::ConfigCache::Mode::kReadOnly);
  for (const auto& m : test::all_measurements(db)) {
    EXPECT_EQ(m.m.outcome, ktune::Outcome::kSkipped) << m.m.config_name << ": " << m.m.reason;
  }
}

TEST(ByoTune, CompileOnlySweepOfGatherWithItsI32IndexTensor) {
  test::TempDir dir;
  const auto r = run_ktune(compile_only(kExamples / "gather", "gather", "vocab=32000,tokens=512,hidden=4096",
                                        (dir / "g.db").string(), "100"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // THREADS {32..512} x ROWS {1,2,4,8} = 20, less the 3 of more than 1024 threads.
  EXPECT_EQ(nlohmann::json::parse(r.out).at("keys")[0].at("evaluations"), 17) << r.out;
  auto db = cache::ConfigCache::open(dir / "g.db", cache::ConfigCache::Mode::kReadOnly);
  const auto rows = test::all_measurements(db);
  ASSERT_EQ(rows.size(), 17u);
  for (const auto& m : rows) {
    EXPECT_EQ(m.m.outcome, ktune::Outcome::kSkipped) << m.m.config_name << ": " << m.m.reason;
    EXPECT_EQ(m.m.reason, "compile-only");
    EXPECT_GT(nlohmann::json::parse(m.m.resources_json).at("registers").get<int>(), 0) << m.m.resources_json;
  }
}

TEST(ByoTune, AFillThatGivesOnlyZerosForAShapeIsNamedWhenNothingIsLeft) {
  // vocab = 1 makes the ids' range [0, vocab - 1] = [0, 0]: every config is refused, and the
  // key's error says why with the file, the line and the field.
  test::TempDir dir;
  const auto r = run_ktune(compile_only(kExamples / "gather", "gather", "vocab=1,tokens=64,hidden=512",
                                        (dir / "z.db").string(), "10"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("the spec's first rejection: "), std::string::npos) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("gather.toml:33: arg 'ids'.fill: the range [0, 0] can only produce zeros"),
            std::string::npos)
      << r.out << r.err;
}

TEST(ByoTune, AnEditOfEitherFileIsANewKernelHash) {
  test::TempDir dir;
  const auto copy = dir / "k";
  std::filesystem::create_directories(copy);
  for (const char* f : {"transpose.cu", "transpose.toml"}) {
    std::filesystem::copy_file(kExamples / "transpose" / f, copy / f);
  }
  const std::string db_path = (dir / "h.db").string();
  const auto args = compile_only(copy, "transpose", "rows=256,cols=256", db_path, "2");
  ASSERT_EQ(run_ktune(args).exit_code, 0);
  std::ofstream(copy / "transpose.cu", std::ios::app) << "// edited\n";
  const auto after_cu = run_ktune(args);
  ASSERT_EQ(after_cu.exit_code, 0) << after_cu.err;
  EXPECT_EQ(nlohmann::json::parse(after_cu.out).at("keys")[0].at("from_cache"), 0) << after_cu.out;
  std::ofstream(copy / "transpose.toml", std::ios::app) << "# edited\n";
  const auto after_toml = run_ktune(args);
  ASSERT_EQ(after_toml.exit_code, 0) << after_toml.err;
  EXPECT_EQ(nlohmann::json::parse(after_toml.out).at("keys")[0].at("from_cache"), 0) << after_toml.out;
  auto db = cache::ConfigCache::open(db_path, cache::ConfigCache::Mode::kReadOnly);
  std::set<std::string> hashes;
  for (const auto& m : test::all_measurements(db)) hashes.insert(m.kernel.source_hash);
  EXPECT_EQ(hashes.size(), 3u);
}

TEST(ByoTune, ACompileErrorIsStoredWithNvrtcsLogNamingTheUsersLine) {
  test::TempDir dir;
  const auto copy = dir / "k";
  std::filesystem::create_directories(copy);
  std::filesystem::copy_file(kExamples / "transpose" / "transpose.toml", copy / "transpose.toml");
  std::ifstream in(kExamples / "transpose" / "transpose.cu");
  std::string cu((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Line 19 loses its semicolon; NVRTC reports the statement after it, line 20.
  cu.replace(cu.find("__syncthreads();"), 16, "__syncthreads()");
  std::ofstream(copy / "transpose.cu") << cu;
  const std::string db_path = (dir / "c.db").string();
  const auto r = run_ktune(compile_only(copy, "transpose", "rows=64,cols=64", db_path, "2"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto db = cache::ConfigCache::open(db_path, cache::ConfigCache::Mode::kReadOnly);
  const auto rows = test::all_measurements(db);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& m : rows) {
    EXPECT_EQ(m.m.outcome, ktune::Outcome::kCompileError) << m.m.config_name;
    EXPECT_NE(m.m.reason.find("transpose.cu(20)"), std::string::npos) << m.m.reason;
  }
}

TEST(ByoTune, QueryAndReportKnowTheKernelThroughKernelDir) {
  test::TempDir dir;
  const std::string db = (dir / "q.db").string();
  const std::string folder = (kExamples / "transpose").string();
  ASSERT_EQ(
      run_ktune(compile_only(kExamples / "transpose", "transpose", "rows=64,cols=64", db, "2")).exit_code, 0);
  const std::vector<std::string> query = {
      "query", "--kernel", "transpose", "--shape", "rows=64,cols=64",   "--dtype",
      "f32",   "--db",     db,          "--gpu",   "compile-only sm_90"};
  // A name neither the catalog nor the database holds is unknown (exit 2, pointing at --kernel-dir).
  // The database holds transpose, so with or without its folder the query is answered from it, and
  // a compile-only sweep has no winner (exit 4).
  auto other = query;
  other[2] = "transpose2";
  const auto unknown = run_ktune(other);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("--kernel-dir"), std::string::npos) << unknown.err;
  const auto stored = run_ktune(query);
  EXPECT_EQ(stored.exit_code, 4) << stored.err;
  EXPECT_NE(stored.err.find("no tuned config for kernel transpose"), std::string::npos) << stored.err;
  auto with_dir = query;
  with_dir.insert(with_dir.begin() + 1, {"--kernel-dir", folder});
  const auto known = run_ktune(with_dir);
  EXPECT_EQ(known.exit_code, 4) << known.err;
  EXPECT_NE(known.err.find("no tuned config for kernel transpose"), std::string::npos) << known.err;

  const auto report = run_ktune({"report", "--kernel-dir", folder, "--kernel", "transpose", "--db", db,
                                 "--format", "json", "--out", (dir / "r.json").string()});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  std::ifstream in(dir / "r.json");
  const auto doc = nlohmann::json::parse(in);
  ASSERT_TRUE(doc.contains("measurements")) << doc.dump().substr(0, 400);
  ASSERT_EQ(doc.at("measurements").size(), 2u);
  for (const auto& m : doc.at("measurements")) {
    EXPECT_EQ(m.at("verified"), true);
    EXPECT_DOUBLE_EQ(m.at("bytes").get<double>(), 2.0 * 64 * 64 * 4);  // the description's work model
  }
}

TEST(ByoTune, ADescriptionErrorExits2NamingFileLineAndField) {
  test::TempDir dir;
  const auto copy = dir / "k";
  std::filesystem::create_directories(copy);
  std::filesystem::copy_file(kExamples / "transpose" / "transpose.cu", copy / "transpose.cu");
  std::ifstream in(kExamples / "transpose" / "transpose.toml");
  std::string toml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  toml.replace(toml.find("elements = \"rows * cols\""), 24, "elements = \"rows * colums\"");
  std::ofstream(copy / "transpose.toml") << toml;
  const auto r = run_ktune(compile_only(copy, "transpose", "rows=64,cols=64", (dir / "e.db").string(), "1"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("transpose.toml:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("arg 'in'.elements"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("colums"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ktune::tuner
