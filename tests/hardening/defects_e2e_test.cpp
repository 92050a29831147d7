// Bad input found by trying ktune as a new user would, end to end through the binary:
// each is exit 2 with a message that says what is wrong, never exit 1 with a system error text.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "tests/cli/ktune_runner.hpp"
#include "tests/cli/test_db_fixture.hpp"

namespace ktune::testing {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(BadInput, ReportOutIsAFolderOrEmpty) {
  TempDir dir;
  const auto db = dir / "k.db";
  make_test_db(db, 1601);
  std::filesystem::create_directories(dir / "reports");
  for (const std::string format : {"md", "csv", "json", "html"}) {
    const RunResult folder =
        run_ktune({"report", "--db", db.string(), "--format", format, "--out", (dir / "reports").string()});
    EXPECT_EQ(folder.exit_code, 2) << format << ": " << folder.err;
    EXPECT_TRUE(contains(folder.err, "is a folder")) << folder.err;
    EXPECT_FALSE(contains(folder.err, "Success")) << folder.err;
    const RunResult empty = run_ktune({"report", "--db", db.string(), "--format", format, "--out", ""});
    EXPECT_EQ(empty.exit_code, 2) << format << ": " << empty.err;
    EXPECT_TRUE(contains(empty.err, "output path is empty")) << empty.err;
  }
  // Nothing was left behind: no stray temporary report next to the folder or in it.
  EXPECT_TRUE(std::filesystem::is_empty(dir / "reports"));
  EXPECT_FALSE(std::filesystem::exists(dir / "reports.tmp"));
  EXPECT_FALSE(std::filesystem::exists(".tmp"));
}

TEST(BadInput, DatabaseThatIsNotARegularFile) {
  TempDir dir;
  const auto fifo = dir / "pipe.db";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto export_file = dir / "export.json";  // the import's file must exist (CLI11 checks it first)
  std::ofstream(export_file) << R"({"format":"ktune-export","format_version":1})";
  for (const std::string& db : {std::string("/dev/null"), fifo.string()}) {
    const std::vector<std::vector<std::string>> commands = {
        {"cache", "list", "--db", db},
        {"cache", "verify", "--db", db},
        {"query", "--kernel", "gemm", "--shape", "m=16,n=4096,k=4096", "--dtype", "bf16", "--db", db},
        {"report", "--format", "csv", "--out", (dir / "r.csv").string(), "--db", db},
        {"cache", "import", export_file.string(), "--db", db},
    };
    for (const auto& args : commands) {
      const RunResult r = run_ktune(args);
      EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << " --db " << db << ": " << r.err;
      EXPECT_TRUE(contains(r.err, "not a ktune database")) << r.err;
    }
  }
  EXPECT_EQ(std::filesystem::status(fifo).type(), std::filesystem::file_type::fifo);  // left as it was
}

TEST(BadInput, CompileOnlyForAnArchitectureNvrtcDoesNotKnow) {
  TempDir dir;
  const auto db = dir / "t.db";
  const RunResult r = run_ktune({"tune", "--compile-only", "--arch", "sm_999", "--kernel", "swiglu",
                                 "--shape", "m=16,i=4096", "--dtype", "bf16", "--db", db.string()});
  if (r.exit_code == 3) GTEST_SKIP() << "NVRTC is not available here: " << r.err;
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "sm_999")) << r.err;
  EXPECT_TRUE(contains(r.err, "sm_90")) << r.err;  // the list of what NVRTC supports (CUDA 12 and 13 have it)
  // Refused before the database is opened: no sweep of compile errors was recorded.
  EXPECT_FALSE(std::filesystem::exists(db));
  const RunResult digits = run_ktune({"tune", "--compile-only", "--arch", "sm_99999999999", "--kernel",
                                      "swiglu", "--shape", "m=16,i=4096", "--db", db.string()});
  EXPECT_EQ(digits.exit_code, 2) << digits.err;
  EXPECT_TRUE(contains(digits.err, "sm_99999999999")) << digits.err;
}

}  // namespace
}  // namespace ktune::testing
