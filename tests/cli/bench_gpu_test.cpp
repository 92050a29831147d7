// `ktune bench` and the cuBLAS baseline on a GPU (label gpu; every test skips with the reason when
// there is no device): the JSON of `--baseline cublas` has both rows timed, verified and positive;
// the cuBLAS measurer in this process agrees with the protocol (graph batches for short GEMMs,
// rotation); `--best` times the winner the database names for this GPU and exits 4 without one.
// The ktune binary is $KTUNE_BIN when set (the packed one on the GPU machine), else this build's.

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "harness/device_info.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "tests/cli/ktune_runner.hpp"
#include "tests/cli/test_db_fixture.hpp"
#include "tuner/library/cublas_baseline_measurer.hpp"

namespace ktune::testing {
namespace {

namespace kt = kernel_templates;

/// Why there is no usable GPU here, or "" when there is one.
std::string no_gpu_reason() {
  try {
    return harness::device_count() > 0 ? "" : "no CUDA device";
  } catch (const Error& e) {
    return e.what();
  }
}

/// The ktune under test: $KTUNE_BIN (the packed binary on the GPU machine), else this build's.
std::string ktune_under_test() {
  const char* env = std::getenv("KTUNE_BIN");
  return env != nullptr && *env != '\0' ? env : ktune_binary();
}

std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Runs ktune_under_test() with `args`, stdout and stderr captured apart.
RunResult run_bench(const std::vector<std::string>& args) {
  TempDir tmp;
  std::string command = shell_quoted(ktune_under_test());
  for (const auto& a : args) command += " " + shell_quoted(a);
  command += " >" + shell_quoted((tmp / "out").string()) + " 2>" + shell_quoted((tmp / "err").string());
  const int status = std::system(command.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(tmp / "out");
  r.err = slurp(tmp / "err");
  return r;
}

#define REQUIRE_GPU()                                         \
  do {                                                        \
    const std::string why = no_gpu_reason();                  \
    if (!why.empty()) GTEST_SKIP() << "needs a GPU: " << why; \
  } while (0)

TEST(BenchGpu, GemmAgainstCublasPrintsBothRowsTimedAndVerified) {
  REQUIRE_GPU();
  const auto r = run_bench({"bench", "--kernel", "gemm", "--shape", "m=128,n=256,k=512", "--dtype", "bf16",
                            "--baseline", "cublas", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc.at("shape"), "m=128,n=256,k=512");
  EXPECT_EQ(doc.at("layout"), "nt");
  EXPECT_EQ(doc.at("config_source"), "default");
  const auto& rows = doc.at("results");
  ASSERT_EQ(rows.size(), 2u) << doc.dump(2);
  EXPECT_EQ(rows[0].at("role"), "config");
  EXPECT_EQ(rows[1].at("role"), "baseline");
  EXPECT_EQ(rows[1].at("baseline"), "cublas");
  EXPECT_EQ(rows[1].at("name"), "cublas.bf16.nt");
  for (const auto& row : rows) {
    SCOPED_TRACE(row.at("name").get<std::string>());
    EXPECT_EQ(row.at("outcome"), "ok") << row.value("reason", "");
    EXPECT_GT(row.at("stats").at("median_us").get<double>(), 0);
    EXPECT_GT(row.at("stats").at("min_us").get<double>(), 0);
    EXPECT_GE(row.at("stats").at("samples").get<int>(), 10);
    EXPECT_GE(row.at("rel_err").get<double>(), 0) << "verified against the reference";
    // 2*128*256*512 FLOPs over the median.
    const double want_tflops =
        2.0 * 128 * 256 * 512 / (row.at("stats").at("median_us").get<double>() * 1e-6) / 1e12;
    EXPECT_NEAR(row.at("tflops").get<double>(), want_tflops, want_tflops * 1e-6);
    ASSERT_TRUE(row.at("speedup").is_number());
  }
  EXPECT_DOUBLE_EQ(rows[1].at("speedup").get<double>(), 1.0);
  EXPECT_NEAR(
      rows[0].at("speedup").get<double>(),
      rows[1].at("stats").at("median_us").get<double>() / rows[0].at("stats").at("median_us").get<double>(),
      1e-9);
}

TEST(BenchGpu, EveryTemplateKernelBenchesAgainstItsDefault) {
  REQUIRE_GPU();
  const std::vector<std::vector<std::string>> cases = {
      {"--kernel", "gemm", "--shape", "m=16,n=1024,k=1024", "--dtype", "f16", "--layout", "nn"},
      {"--kernel", "rmsnorm", "--shape", "rows=16,hidden=4096", "--dtype", "bf16"},
      {"--kernel", "softmax", "--shape", "rows=32,cols=1000", "--dtype", "f32"},
      {"--kernel", "swiglu", "--shape", "m=16,i=11008", "--dtype", "bf16"},
      {"--kernel", "rmsnorm_rope", "--shape", "tokens=16,heads_q=32,heads_kv=8,head_dim=128", "--dtype",
       "bf16"},
  };
  for (auto args : cases) {
    args.insert(args.begin(), "bench");
    for (const char* extra : {"--baseline", "default", "--json", "--max-time-ms", "100"})
      args.emplace_back(extra);
    SCOPED_TRACE(args[2]);
    const auto r = run_bench(args);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const auto doc = nlohmann::json::parse(r.out);
    ASSERT_EQ(doc.at("results").size(), 2u);
    for (const auto& row : doc.at("results")) {
      EXPECT_EQ(row.at("outcome"), "ok") << row.value("reason", "");
      EXPECT_GT(row.at("stats").at("median_us").get<double>(), 0);
    }
    EXPECT_EQ(doc.at("results")[1].at("baseline"), "default");
  }
}

TEST(BenchGpu, CublasMeasurerFollowsTheProtocol) {
  REQUIRE_GPU();
  tuner::CublasBaselineMeasurer blas(0);
  for (const auto& [dtype, layout, m] : std::vector<std::tuple<ktune::DType, std::string, int64_t>>{
           {ktune::DType::kBF16, "nt", 1}, {ktune::DType::kF16, "nn", 77}, {ktune::DType::kF32, "nt", 256}}) {
    const kt::Problem p{{{"m", m}, {"n", 1024}, {"k", 768}}, dtype, layout};
    SCOPED_TRACE(p.shape_text() + " " + std::string(ktune::to_string(dtype)) + " " + layout);
    for (const measure::FlushMode flush : {measure::FlushMode::kL2, measure::FlushMode::kRotate}) {
      measure::TimingOptions t;
      t.flush = flush;
      t.max_time_ms = 200;
      const auto r = blas.measure_cublas(p, t, true);
      ASSERT_EQ(r.outcome, ktune::Outcome::kOk) << r.reason;
      ASSERT_TRUE(r.stats.has_value());
      EXPECT_GT(r.stats->median, 0);
      EXPECT_GE(r.rel_err, 0);
      EXPECT_LE(r.rel_err, 0.05);
      EXPECT_EQ(r.flush, std::string(measure::to_string(flush)));
      // Batching depends on the measured time (no speed is asserted): at least one launch a sample.
      EXPECT_GE(r.launches_per_sample, 1) << r.stats->median << " us";
      EXPECT_FALSE(r.resources.value("algorithm", std::string()).empty());
    }
  }
}

TEST(BenchGpu, BestTimesTheCachedWinnerAndExits4WithoutOne) {
  REQUIRE_GPU();
  const harness::DeviceInfo dev = harness::query_device(0);
  TempDir tmp;
  const auto path = tmp / "best.db";
  const kt::Problem p{{{"m", 64}, {"n", 512}, {"k", 256}}, ktune::DType::kBF16, "nt"};
  const kt::KernelSpec& spec = kt::find_spec("gemm", "tiled");
  ktune::Config c = spec.default_config(p);
  c.set("BLOCK_N", 32);  // not the default: --best must not fall back to it
  const std::string name = spec.canonical_name(p, c);
  ASSERT_FALSE(spec.rejection(p, c).has_value());
  {
    auto db = cache::ConfigCache::open(path);
    const int64_t gpu =
        db.upsert_gpu({dev.name, dev.cc_major, dev.cc_minor, dev.sm_count, dev.memory_bytes, "{}"});
    const int64_t kernel = db.upsert_kernel({"gemm", kt::template_source_hash("gemm")});
    const int64_t run = db.begin_run({});
    cache::Measurement m;
    m.shape = p.shape_text();
    m.dtype = DType::kBF16;
    m.layout = "nt";
    m.config_name = name;
    m.config_json = c.to_json().dump();
    m.stats = cache::Stats{12.5, 12, 12.6, 13, 0.1, 40};
    db.set_best(db.record(run, gpu, kernel, {m}).at(0));
  }
  const auto r = run_bench({"bench", "--kernel", "gemm", "--shape", "m=64,n=512,k=256", "--dtype", "bf16",
                            "--best", "--db", path.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc.at("config_source"), "--best");
  EXPECT_EQ(doc.at("results").at(0).at("name"), name);
  EXPECT_EQ(doc.at("best").at("config_name"), name);

  const auto miss = run_bench({"bench", "--kernel", "gemm", "--shape", "m=65,n=512,k=256", "--dtype", "bf16",
                               "--best", "--db", path.string()});
  EXPECT_EQ(miss.exit_code, 4) << miss.err;
  EXPECT_NE(miss.err.find("no tuned config"), std::string::npos) << miss.err;
  const auto no_db = run_bench({"bench", "--kernel", "gemm", "--shape", "m=64,n=512,k=256", "--dtype", "bf16",
                                "--best", "--db", (tmp / "absent.db").string()});
  EXPECT_EQ(no_db.exit_code, 4) << no_db.err;
}

}  // namespace
}  // namespace ktune::testing
