/// `ktune report` end to end: the binary over a fixture database, every format, the filters and
/// the exit codes docs/cli.md promises.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>

#include "csv_parser.hpp"
#include "fixture_db.hpp"
#include "report_fixture.hpp"

namespace ktune::reports {
namespace {

class ReportCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* bin = std::getenv("KTUNE_BINARY_DIR");
    ktune_ = std::filesystem::path(bin != nullptr ? bin : ".") / "cli" / "ktune";
    if (!std::filesystem::exists(ktune_)) GTEST_SKIP() << "ktune binary not built at " << ktune_;
    fixture_ = testing::make_fixture({.seed = 81, .hostile = true});
    testing::write_fixture_db(fixture_, db());
  }
  std::filesystem::path db() const { return dir_.path() / "ktune.db"; }

  /// Runs `ktune report <args>`; returns the exit code, stderr in `err_`.
  int report(const std::string& args) {
    const std::string command = ktune_.string() + " report --db '" + db().string() + "' " + args + " 2> '" +
                                (dir_.path() / "err.txt").string() + "'";
    const int status = std::system(command.c_str());
    std::ifstream in(dir_.path() / "err.txt");
    err_.assign((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string read(const std::string& name) const {
    std::ifstream in(dir_.path() / name, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  std::string out(const std::string& name) const { return "--out '" + (dir_.path() / name).string() + "'"; }

  std::filesystem::path ktune_;
  testing::TempDir dir_;
  testing::Fixture fixture_;
  std::string err_;
};

TEST_F(ReportCliTest, EveryFormat) {
  ASSERT_EQ(report("--format csv " + out("r.csv")), 0) << err_;
  EXPECT_EQ(testing::parse_csv(read("r.csv")).size(), fixture_.measurements.size() + 1);
  EXPECT_NE(err_.find("wrote csv report"), std::string::npos);
  ASSERT_EQ(report("--format json " + out("r.json")), 0) << err_;
  EXPECT_EQ(nlohmann::json::parse(read("r.json"))["measurements"].size(), fixture_.measurements.size());
  ASSERT_EQ(report("--format md " + out("r.md")), 0) << err_;
  EXPECT_TRUE(read("r.md").starts_with("# ktune report"));
  ASSERT_EQ(report("--format md --out - > '" + (dir_.path() / "stdout.md").string() + "'"), 0) << err_;
  EXPECT_TRUE(read("stdout.md").starts_with("# ktune report"));  // the summary line went to stderr
  EXPECT_NE(err_.find("wrote md report to stdout"), std::string::npos);
  if (std::filesystem::exists("/usr/share/javascript/chart.js/chart.min.js")) {
    ASSERT_EQ(report("--format html " + out("r.html")), 0) << err_;
    EXPECT_NE(read("r.html").find("<canvas"), std::string::npos);
  }
}

TEST_F(ReportCliTest, FiltersAndWinners) {
  ASSERT_EQ(report("--format json --kernel copy --dtype f32 --winners " + out("w.json")), 0) << err_;
  const nlohmann::json doc = nlohmann::json::parse(read("w.json"));
  ASSERT_FALSE(doc["measurements"].empty());
  for (const nlohmann::json& m : doc["measurements"]) {
    EXPECT_EQ(m["kernel"], "copy");
    EXPECT_TRUE(m["winner"].get<bool>());
  }
  ASSERT_EQ(report("--format csv --run 1 " + out("run1.csv")), 0) << err_;
  const auto rows = testing::parse_csv(read("run1.csv"));
  const auto run_col = std::find(rows[0].begin(), rows[0].end(), "run_id") - rows[0].begin();
  for (size_t r = 1; r < rows.size(); ++r) EXPECT_EQ(rows[r][static_cast<size_t>(run_col)], "1");
}

TEST_F(ReportCliTest, AGpuIsNamedByAUniquePartOfItsNameAndAnUnknownOneOrKernelListsWhatExists) {
  // The fixture's one GPU is "NVIDIA H200 <hostile text>": any case, any unique part of it.
  ASSERT_EQ(report("--format json --gpu h200 " + out("g.json")), 0) << err_;
  EXPECT_EQ(nlohmann::json::parse(read("g.json"))["measurements"].size(), fixture_.measurements.size());

  EXPECT_EQ(report("--format json --gpu A100 " + out("none.json")), 2) << err_;
  EXPECT_NE(err_.find("holds no such GPU"), std::string::npos) << err_;
  EXPECT_NE(err_.find("NVIDIA H200"), std::string::npos) << err_;
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "none.json"));

  EXPECT_EQ(report("--format json --kernel gem " + out("k.json")), 2) << err_;
  for (const char* kernel : {"\"gemm\"", "\"copy\"", "\"softmax\""}) {
    EXPECT_NE(err_.find(kernel), std::string::npos) << kernel << " not listed: " << err_;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "k.json"));

  // A dtype that does not exist is refused the same way, naming the known ones.
  EXPECT_EQ(report("--format json --dtype f64 " + out("d.json")), 2) << err_;
  EXPECT_NE(err_.find("unknown dtype 'f64' (known: f32, f16, bf16, fp8e4m3, fp8e5m2)"), std::string::npos)
      << err_;
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "d.json"));
}

TEST_F(ReportCliTest, ExitCodes) {
  EXPECT_EQ(report("--format pdf " + out("x.pdf")), 2);  // bad usage
  EXPECT_EQ(report("--format csv"), 2);                  // --out missing
  EXPECT_EQ(report("--format csv --out /nonexistent-dir/x.csv"), 1) << err_;
  EXPECT_NE(err_.find("/nonexistent-dir/x.csv"), std::string::npos);
  EXPECT_NE(err_.find("the folder '/nonexistent-dir' does not exist"), std::string::npos) << err_;
  EXPECT_EQ(err_.find(".tmp"), std::string::npos) << "names an internal file: " << err_;
  std::filesystem::remove(db());
  EXPECT_EQ(report("--format csv " + out("x.csv")), 4) << err_;  // no database
}

TEST_F(ReportCliTest, MissingChartJsNamesThePackage) {
  ASSERT_EQ(setenv("KTUNE_CHART_JS", "/nonexistent/chart.min.js", 1), 0);
  const int code = report("--format html " + out("x.html"));
  unsetenv("KTUNE_CHART_JS");
  EXPECT_EQ(code, 1);
  EXPECT_NE(err_.find("libjs-chart.js"), std::string::npos) << err_;
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "x.html"));
}

}  // namespace
}  // namespace ktune::reports
