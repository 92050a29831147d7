// `ktune query` end to end: found, fallback, not found, bad input, database resolution.

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "harness/device_info.hpp"
#include "ktune/error.hpp"
#include "tests/cli/ktune_runner.hpp"
#include "tests/cli/test_db_fixture.hpp"

namespace ktune::testing {
namespace {

bool has_device() {
  try {
    return harness::device_count() > 0;
  } catch (const Error&) {
    return false;
  }
}

class QueryTest : public ::testing::Test {
 protected:
  void SetUp() override { db_ = make_test_db(tmp_ / "q.db", std::random_device{}()); }
  std::vector<std::string> query(const std::string& kernel, const std::string& shape,
                                 const std::string& dtype) {
    return {"query", "--kernel", kernel, "--shape", shape, "--dtype", dtype, "--db", db_.path.string()};
  }
  TempDir tmp_;
  TestDb db_;
};

TEST_F(QueryTest, FoundPrintsTheWinnerAsJson) {
  SCOPED_TRACE("seed " + std::to_string(db_.seed));
  const auto& want = db_.find("Test GPU Alpha", "gemm", "m=512,n=4096,k=4096", "bf16");
  auto args = query("gemm", "k=4096,m=512,n=4096", "bf16");  // any order; normalized to m,n,k
  args.insert(args.end(), {"--gpu", "Test GPU Alpha", "--json"});
  const auto r = run_ktune(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("config_name"), want.config_name);
  EXPECT_NEAR(j.at("median_us").get<double>(), want.median_us, 1e-9 * want.median_us);
  EXPECT_EQ(j.at("shape"), "m=512,n=4096,k=4096");
  EXPECT_EQ(j.at("tuned_shape"), "m=512,n=4096,k=4096");
  EXPECT_EQ(j.at("gpu"), "Test GPU Alpha");
  EXPECT_EQ(j.at("dtype"), "bf16");
  EXPECT_EQ(j.at("layout"), "nt");
  EXPECT_EQ(j.at("fallback"), false);
  EXPECT_TRUE(j.at("config").is_object());
  EXPECT_EQ(r.err.find("nearest"), std::string::npos) << r.err;
}

TEST_F(QueryTest, TwoLayoutsOfOneShapeAnswerSeparatelyAndGemmDefaultsToNt) {
  SCOPED_TRACE("seed " + std::to_string(db_.seed));
  const std::string shape = "m=16,n=4096,k=4096";
  const auto& nt = db_.find("Test GPU Alpha", "gemm", shape, "bf16", "nt");
  const auto& nn = db_.find("Test GPU Alpha", "gemm", shape, "bf16", "nn");
  ASSERT_NE(nt.config_name, nn.config_name);
  auto ask = [&](const std::vector<std::string>& extra) {
    auto args = query("gemm", shape, "bf16");
    args.insert(args.end(), {"--gpu", "Test GPU Alpha", "--json", "--no-fallback"});
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_ktune(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  };
  const auto j_nn = ask({"--layout", "nn"});
  EXPECT_EQ(j_nn.value("config_name", ""), nn.config_name);
  EXPECT_EQ(j_nn.value("layout", ""), "nn");
  const auto j_nt = ask({"--layout", "nt"});
  EXPECT_EQ(j_nt.value("config_name", ""), nt.config_name);
  EXPECT_EQ(j_nt.value("layout", ""), "nt");
  const auto j_default = ask({});
  EXPECT_EQ(j_default.value("config_name", ""), nt.config_name);
  EXPECT_EQ(j_default.value("layout", ""), "nt");

  // A layout the kernel does not accept is bad input; an accepted one never tuned is not found.
  auto bad = query("gemm", shape, "bf16");
  bad.insert(bad.end(), {"--gpu", "Test GPU Alpha", "--layout", "tt"});
  const auto rb = run_ktune(bad);
  EXPECT_EQ(rb.exit_code, 2) << rb.err;
  EXPECT_NE(rb.err.find("'tt'"), std::string::npos) << rb.err;
  auto untuned = query("gemm", shape, "bf16");
  untuned.insert(untuned.end(), {"--gpu", "Test GPU Alpha", "--layout", "nn+silu"});
  EXPECT_EQ(run_ktune(untuned).exit_code, 4);
}

TEST_F(QueryTest, FoundPrintsHumanTextOnStdout) {
  const auto& want = db_.find("Test GPU Alpha", "rmsnorm", "rows=16,hidden=4096", "f16");
  auto args = query("rmsnorm", "hidden=4096,rows=16", "f16");
  args.insert(args.end(), {"--gpu", "Test GPU Alpha"});
  const auto r = run_ktune(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(want.config_name), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("median"), std::string::npos) << r.out;
}

TEST_F(QueryTest, UntunedShapeFallsBackToNearestAndSaysSo) {
  const auto& want = db_.find("Test GPU Alpha", "gemm", "m=16,n=4096,k=4096", "bf16");
  auto args = query("gemm", "m=24,n=4096,k=4096", "bf16");  // |log2(24/16)| << |log2(512/24)|
  args.insert(args.end(), {"--gpu", "Test GPU Alpha", "--json"});
  const auto r = run_ktune(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("fallback"), true);
  EXPECT_EQ(j.at("shape"), "m=24,n=4096,k=4096");
  EXPECT_EQ(j.at("tuned_shape"), "m=16,n=4096,k=4096");
  EXPECT_EQ(j.at("config_name"), want.config_name);
  EXPECT_NE(r.err.find("tuned for m=16,n=4096,k=4096, nearest to the one asked"), std::string::npos) << r.err;
}

TEST_F(QueryTest, NoFallbackMakesAnUntunedShapeNotFound) {
  auto args = query("gemm", "m=24,n=4096,k=4096", "bf16");
  args.insert(args.end(), {"--gpu", "Test GPU Alpha", "--no-fallback", "--json"});
  const auto r = run_ktune(args);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("no tuned config"), std::string::npos) << r.err;
}

TEST_F(QueryTest, UntunedDtypeOrGpuIsNotFound) {
  auto args = query("gemm", "m=16,n=4096,k=4096", "f16");
  args.insert(args.end(), {"--gpu", "Test GPU Alpha"});
  auto r = run_ktune(args);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("f16"), std::string::npos) << r.err;
}

TEST_F(QueryTest, AGpuIsNamedByAUniquePartOfItsNameAndAnUnknownOneListsTheDatabasesGpus) {
  auto args = query("gemm", "m=16,n=4096,k=4096", "bf16");
  args.insert(args.end(), {"--gpu", "gpu alpha", "--json"});
  auto r = run_ktune(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("gpu"), "Test GPU Alpha");

  args = query("gemm", "m=16,n=4096,k=4096", "bf16");
  args.insert(args.end(), {"--gpu", "Some Other GPU"});
  r = run_ktune(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("Some Other GPU"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\"Test GPU Alpha\""), std::string::npos)
      << "lists what the database holds: " << r.err;
}

TEST_F(QueryTest, MissingDatabaseIsNotFoundWithAHint) {
  const auto missing = (tmp_ / "missing.db").string();
  const auto r = run_ktune({"query", "--kernel", "gemm", "--shape", "m=16,n=4096,k=4096", "--dtype", "bf16",
                            "--gpu", "Test GPU Alpha", "--db", missing});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("no database at " + missing), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ktune tune"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(missing)) << "a read-only query must not create the database";
}

TEST_F(QueryTest, KtuneDbEnvironmentVariableNamesTheDatabase) {
  const auto& want = db_.find("Test GPU Beta", "gemm", "m=64,n=1024,k=1024", "bf16");
  const auto r = run_ktune({"query", "--kernel", "gemm", "--shape", "m=64,n=1024,k=1024", "--dtype", "bf16",
                            "--gpu", "Test GPU Beta", "--json"},
                           {{"KTUNE_DB", db_.path.string()}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("config_name"), want.config_name);
}

TEST_F(QueryTest, SeveralGpusWithoutDeviceNeedGpuFlag) {
  if (has_device())
    GTEST_SKIP() << "a CUDA device is present: the default GPU is device 0, not the database's";
  const auto r = run_ktune(query("gemm", "m=16,n=4096,k=4096", "bf16"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--gpu"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Test GPU Alpha"), std::string::npos) << r.err;
}

TEST_F(QueryTest, DeviceFlagWithoutDriverExits3) {
  if (has_device()) GTEST_SKIP() << "a CUDA device is present; this checks the no-driver path";
  auto args = query("gemm", "m=16,n=4096,k=4096", "bf16");
  args.insert(args.end(), {"--device", "0"});
  const auto r = run_ktune(args);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("ktune: error:"), std::string::npos) << r.err;
}

TEST_F(QueryTest, GpuAndDeviceExcludeEachOther) {
  auto args = query("gemm", "m=16,n=4096,k=4096", "bf16");
  args.insert(args.end(), {"--device", "0", "--gpu", "Test GPU Alpha"});
  EXPECT_EQ(run_ktune(args).exit_code, 2);
}

struct BadInput {
  std::vector<std::string> args;  // kernel, shape, dtype
  std::string named;              // what stderr must name
};

TEST_F(QueryTest, BadShapesKernelsAndDtypesExit2NamingTheBadPart) {
  const std::vector<BadInput> cases = {
      {{"gemm", "m=-1,n=4096,k=4096", "bf16"}, "'m=-1'"},
      {{"gemm", "m=abc,n=4096,k=4096", "bf16"}, "'m=abc'"},
      {{"gemm", "m=16,n=4096", "bf16"}, "missing dimension 'k'"},
      {{"gemm", "m=2147483648,n=4096,k=4096", "bf16"}, "'m=2147483648'"},
      {{"gemm", "m=16,n=4096,k=99999999999999999999999", "bf16"}, "'k=99999999999999999999999'"},
      {{"gemm", "m=16,n=4096,k=4096,q=7", "bf16"}, "unknown dimension 'q'"},
      {{"gemm", "m=0,n=4096,k=4096", "bf16"}, "'m=0'"},
      {{"gemm", "", "bf16"}, "empty shape"},
      {{"gemx", "m=16,n=4096,k=4096", "bf16"}, "'gemx'"},
      {{"gemm", "m=16,n=4096,k=4096", "fp8e4m3"}, "'fp8e4m3'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args[0] + " " + c.args[1] + " " + c.args[2]);
    auto args = query(c.args[0], c.args[1], c.args[2]);
    args.insert(args.end(), {"--gpu", "Test GPU Alpha", "--json"});
    const auto r = run_ktune(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("ktune: error:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.named), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << "no JSON document for a failed query: " << r.out;
  }
}

// A user kernel tuned on another host (a Triton kernel ktune.triton described): this process has
// no folder of it, so only the database knows it. It is answered as stored: the shape in the order
// it was tuned with, no layout.
TEST_F(QueryTest, AKernelOnlyTheDatabaseHoldsIsAnsweredAsStored) {
  SCOPED_TRACE("seed " + std::to_string(db_.seed));
  std::mt19937_64 gen(db_.seed);
  std::uniform_real_distribution<double> median(5.0, 500.0);
  const std::string kernel = "triton_mod_rows_kernel";
  const std::string shape = "rows=16,n_cols=4096";  // not the alphabetical order
  std::string winner;
  {
    auto db = cache::ConfigCache::open(db_.path);
    const int64_t run_id = db.begin_run({});
    const int64_t gpu_id =
        db.upsert_gpu(cache::GpuInfo{"Test GPU Alpha", 9, 0, 132, int64_t{141} << 30, "{}"});
    const int64_t kernel_id = db.upsert_kernel(cache::KernelInfo{kernel, "0123456789abcdef"});
    std::vector<cache::Measurement> ms;
    for (int warps : {1, 2, 4, 8}) {
      cache::Measurement m;
      m.shape = shape;
      m.dtype = DType::kBF16;
      m.config_name = fmt::format("{}.bf16.triton.3.6.0.BLOCK=4096.w{}.s1", kernel, warps);
      m.config_json = fmt::format(R"({{"params":{{"BLOCK":4096,"num_warps":{},"num_stages":1}}}})", warps);
      const double med = median(gen);
      m.stats = cache::Stats{med, med * 0.97, med * 1.01, med * 1.05, med * 0.02, 50};
      ms.push_back(m);
    }
    const auto ids = db.record(run_id, gpu_id, kernel_id, ms);
    size_t win = 0;
    for (size_t i = 1; i < ms.size(); ++i) {
      if (ms[i].stats->median_us < ms[win].stats->median_us) win = i;
    }
    db.set_best(ids[win]);
    winner = ms[win].config_name;
  }
  auto args = query(kernel, shape, "bf16");
  args.insert(args.end(), {"--gpu", "Test GPU Alpha", "--json"});
  const auto r = run_ktune(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("config_name"), winner);
  EXPECT_EQ(j.at("kernel"), kernel);
  EXPECT_EQ(j.at("layout"), "");

  args = query(kernel, "rows=17,n_cols=4096", "bf16");
  args.insert(args.end(), {"--gpu", "Test GPU Alpha", "--no-fallback"});
  EXPECT_EQ(run_ktune(args).exit_code, 4) << "a shape it does not hold";
  args = query(kernel, shape, "bf16");
  args.insert(args.end(), {"--gpu", "Test GPU Alpha", "--layout", "nt"});
  const auto layout = run_ktune(args);
  EXPECT_EQ(layout.exit_code, 2) << layout.err;
  EXPECT_NE(layout.err.find("does not accept layout 'nt'"), std::string::npos) << layout.err;
  const auto unknown = run_ktune(query("triton_mod_other", shape, "bf16"));
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("unknown kernel 'triton_mod_other'"), std::string::npos) << unknown.err;
  const auto no_db = run_ktune({"query", "--kernel", kernel, "--shape", shape, "--dtype", "bf16", "--db",
                                (tmp_ / "none.db").string()});
  EXPECT_EQ(no_db.exit_code, 2) << "without a database the name is unknown: " << no_db.err;
}

TEST_F(QueryTest, MissingRequiredOptionIsAUsageError) {
  const auto r = run_ktune({"query", "--kernel", "gemm", "--dtype", "bf16", "--db", db_.path.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE((r.out + r.err).find("--shape"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace ktune::testing
