// `ktune bench`'s pieces without a GPU: resolving kernel/shape/dtype/layout and a config's JSON forms,
// the default config, speed-ups, and the table / JSON / Google Benchmark renderings.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/bench_table.hpp"
#include "cli/bench_target.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::testing {
namespace {

using cli::BenchRow;

/// Runs `fn`, expects ktune::Error(kBadInput) whose message holds `part`.
template <class Fn>
void expect_bad_input(Fn fn, const std::string& part) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one naming " << part;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(BenchTarget, CanonicalShapeDtypeAndDefaultLayout) {
  const auto t = cli::parse_bench_target("gemm", "k=512,m=128,n=256", "bf16", "");
  EXPECT_EQ(t.kernel->name, "gemm");
  EXPECT_EQ(t.shape, "m=128,n=256,k=512");
  EXPECT_EQ(t.problem.layout, "nt");
  EXPECT_EQ(t.problem.dtype, ktune::DType::kBF16);
  ASSERT_EQ(t.problem.dims.size(), 3u);
  EXPECT_EQ(t.problem.dim("k"), 512);
  EXPECT_EQ(cli::parse_bench_target("gemm", "m=1,n=2,k=3", "f16", "nn").problem.layout, "nn");
  EXPECT_EQ(cli::parse_bench_target("rmsnorm", "rows=3,hidden=64", "f32", "").problem.layout, "");
}

TEST(BenchTarget, BadPartsAreNamed) {
  expect_bad_input([] { cli::parse_bench_target("gemmm", "m=1,n=1,k=1", "bf16", ""); }, "gemmm");
  expect_bad_input([] { cli::parse_bench_target("gemm", "m=1,n=1", "bf16", ""); }, "k");
  expect_bad_input([] { cli::parse_bench_target("gemm", "m=0,n=1,k=1", "bf16", ""); }, "m=0");
  expect_bad_input([] { cli::parse_bench_target("gemm", "m=1,n=1,k=1,q=2", "bf16", ""); }, "q");
  expect_bad_input([] { cli::parse_bench_target("gemm", "m=1,n=1,k=1", "f64", ""); }, "f64");
  expect_bad_input([] { cli::parse_bench_target("gemm", "m=1,n=1,k=1", "bf16", "tn"); }, "tn");
  // A catalog kernel without templates (when the catalog still has one) is refused by name.
  for (const auto& k : kernel_templates::kernel_catalog()) {
    if (k.name == "copy" || !kernel_templates::specs_of(k.name).empty()) continue;
    expect_bad_input(
        [&] { cli::parse_bench_target(k.name, k.example_shape(), to_string(k.dtypes.front()), ""); },
        "no templates");
  }
}

TEST(BenchConfig, ThreeJsonFormsGiveTheSameConfig) {
  const auto t = cli::parse_bench_target("gemm", "m=128,n=256,k=512", "bf16", "");
  const auto def = kernel_templates::find_spec("gemm", "tiled").default_config(t.problem);
  // A different valid STAGES from the default's, so the parameter visibly arrives.
  const int64_t stages = def.at("STAGES") == 2 ? 3 : 2;
  const auto nested = cli::parse_bench_config(
      t, nlohmann::json{{"template", "tiled"}, {"params", {{"STAGES", stages}}}}.dump());
  const auto flat =
      cli::parse_bench_config(t, nlohmann::json{{"template", "tiled"}, {"STAGES", stages}}.dump());
  EXPECT_EQ(nested.config.variant, "tiled");
  EXPECT_EQ(nested.config.at("STAGES"), stages);
  EXPECT_EQ(nested.name, flat.name);
  // Left-out parameters come from the template's default.
  EXPECT_EQ(nested.config.at("BLOCK_M"), def.at("BLOCK_M"));
  EXPECT_NE(nested.name, kernel_templates::find_spec("gemm", "tiled").canonical_name(t.problem, def));
}

TEST(BenchConfig, OneTemplateKernelNeedsNoTemplateName) {
  const auto t = cli::parse_bench_target("swiglu", "m=16,i=4096", "f16", "");
  const auto specs = kernel_templates::specs_of("swiglu");
  ASSERT_EQ(specs.size(), 1u);
  const auto c = cli::parse_bench_config(t, "{}");
  EXPECT_EQ(c.config.variant, specs.front()->variant());
  EXPECT_EQ(c.name, specs.front()->canonical_name(t.problem, specs.front()->default_config(t.problem)));
}

TEST(BenchConfig, SeveralTemplatesNeedTheTemplateName) {
  // rmsnorm has rowwise and bulk: a config without "template" is refused, naming both.
  const auto t = cli::parse_bench_target("rmsnorm", "rows=16,hidden=4096", "f16", "");
  expect_bad_input([&] { cli::parse_bench_config(t, R"({"THREADS":128})"); }, "rowwise, bulk");
  EXPECT_EQ(cli::parse_bench_config(t, R"({"template":"bulk"})").config.variant, "bulk");
}

TEST(BenchConfig, BadConfigsAreNamed) {
  const auto t = cli::parse_bench_target("gemm", "m=128,n=256,k=512", "bf16", "");
  expect_bad_input([&] { cli::parse_bench_config(t, "{not json"); }, "not JSON");
  expect_bad_input([&] { cli::parse_bench_config(t, "[1,2]"); }, "not a JSON object");
  expect_bad_input([&] { cli::parse_bench_config(t, R"({"BLOCK_M":64})"); }, "template");
  expect_bad_input([&] { cli::parse_bench_config(t, R"({"template":"warp9"})"); }, "warp9");
  expect_bad_input([&] { cli::parse_bench_config(t, R"({"template":"tiled","BLOCK_Q":64})"); }, "BLOCK_Q");
  expect_bad_input([&] { cli::parse_bench_config(t, R"({"template":"tiled","BLOCK_M":"big"})"); }, "BLOCK_M");
  // A value the template's rules refuse: a rejection, named with the config.
  expect_bad_input([&] { cli::parse_bench_config(t, R"({"template":"tiled","BLOCK_M":-64})"); },
                   "cannot serve");
}

TEST(BenchConfig, DefaultServesEveryKernelWithTemplates) {
  // kernel, shape, dtype, layout; the last five are the gpu suite's cases (bench_gpu_test.cpp).
  const std::vector<std::array<std::string, 4>> cases = {
      {"gemm", "m=1,n=4096,k=4096", "bf16", ""},
      {"gemm", "m=4096,n=4096,k=4096", "f32", "nn"},
      {"gemm", "m=16,n=1024,k=1024", "f16", "nn"},
      {"rmsnorm", "rows=16,hidden=4096", "bf16", ""},
      {"softmax", "rows=32,cols=1000", "f32", ""},
      {"swiglu", "m=16,i=11008", "bf16", ""},
      {"rmsnorm_rope", "tokens=16,heads_q=32,heads_kv=8,head_dim=128", "bf16", ""}};
  for (const auto& [kernel, shape, dtype, layout] : cases) {
    SCOPED_TRACE(kernel + " " + shape + " " + dtype + " " + layout);
    const auto t = cli::parse_bench_target(kernel, shape, dtype, layout);
    const auto c = cli::default_bench_config(t);
    ASSERT_NE(c.spec, nullptr);
    EXPECT_FALSE(c.spec->rejection(t.problem, c.config).has_value());
    EXPECT_EQ(c.name, c.spec->canonical_name(t.problem, c.config));
    // The default plan is one the harness can build (every launch's name is compiled).
    const auto cs = c.spec->compile_spec(t.problem, c.config);
    for (const auto& launch : c.spec->launch_plan(t.problem, c.config).launches) {
      EXPECT_NE(std::find(cs.name_expressions.begin(), cs.name_expressions.end(), launch.name_expression),
                cs.name_expressions.end())
          << launch.name_expression;
    }
  }
  // gemm's default is the template that serves every shape.
  EXPECT_EQ(
      cli::default_bench_config(cli::parse_bench_target("gemm", "m=3,n=5,k=7", "f32", "")).config.variant,
      "tiled");
}

measure::CandidateResult timed(const std::string& name, double median_us, std::mt19937& rng) {
  measure::CandidateResult r;
  r.name = name;
  r.outcome = ktune::Outcome::kOk;
  measure::SampleStats s;
  s.median = median_us;
  s.min = median_us * std::uniform_real_distribution<double>(0.9, 0.99)(rng);
  s.p90 = median_us * std::uniform_real_distribution<double>(1.01, 1.1)(rng);
  s.samples = std::uniform_int_distribution<std::size_t>(10, 500)(rng);
  r.stats = s;
  r.tflops = std::uniform_real_distribution<double>(1, 500)(rng);
  r.gbps = std::uniform_real_distribution<double>(10, 4000)(rng);
  r.stop_reason = "converged";
  return r;
}

std::vector<BenchRow> sample_rows(std::mt19937& rng, double* config_us, double* blas_us) {
  *config_us = std::uniform_real_distribution<double>(5, 500)(rng);
  *blas_us = std::uniform_real_distribution<double>(5, 500)(rng);
  std::vector<BenchRow> rows(3);
  rows[0] = {"config", "", timed("gemm.bf16.nt.tiled.64x64x32", *config_us, rng), std::nullopt, std::nullopt};
  rows[1] = {"baseline", "default", {}, std::nullopt, std::nullopt};
  rows[1].result.name = "gemm.bf16.nt.tiled.default";
  rows[1].result.outcome = ktune::Outcome::kCompileError;  // not timed: no speed-up base
  rows[1].result.reason = "nvrtc said no";
  rows[2] = {"baseline", "cublas", timed("cublas.bf16.nt", *blas_us, rng), 73.5, std::nullopt};
  return rows;
}

TEST(BenchRows, SpeedupIsAgainstTheFirstTimedBaseline) {
  std::mt19937 rng(std::random_device{}());
  double config_us = 0, blas_us = 0;
  auto rows = sample_rows(rng, &config_us, &blas_us);
  cli::compute_speedups(rows);
  ASSERT_TRUE(rows[0].speedup.has_value());
  EXPECT_NEAR(*rows[0].speedup, blas_us / config_us, 1e-12);
  EXPECT_FALSE(rows[1].speedup.has_value());
  ASSERT_TRUE(rows[2].speedup.has_value());
  EXPECT_DOUBLE_EQ(*rows[2].speedup, 1.0);

  std::vector<BenchRow> alone{rows[0]};
  cli::compute_speedups(alone);
  EXPECT_FALSE(alone[0].speedup.has_value()) << "no baseline, no speed-up";
}

cli::BenchContext sample_context() {
  cli::BenchContext c;
  c.kernel = "gemm";
  c.shape = "m=128,n=256,k=512";
  c.dtype = DType::kBF16;
  c.layout = "nt";
  c.config_source = "default";
  c.device = {{"name", "Test GPU"}, {"arch", "sm_90"}};
  return c;
}

TEST(BenchRows, JsonHoldsEveryRowWithRoleSpeedupAndCeiling) {
  std::mt19937 rng(std::random_device{}());
  double config_us = 0, blas_us = 0;
  auto rows = sample_rows(rng, &config_us, &blas_us);
  cli::compute_speedups(rows);
  const auto doc = cli::bench_json(sample_context(), rows);
  EXPECT_EQ(doc.at("kernel"), "gemm");
  EXPECT_EQ(doc.at("layout"), "nt");
  EXPECT_TRUE(doc.at("ceilings").is_null());
  const auto& r = doc.at("results");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].at("role"), "config");
  EXPECT_DOUBLE_EQ(r[0].at("stats").at("median_us").get<double>(), config_us);
  EXPECT_NEAR(r[0].at("speedup").get<double>(), blas_us / config_us, 1e-12);
  EXPECT_TRUE(r[0].at("pct_of_ceiling").is_null());
  EXPECT_EQ(r[1].at("outcome"), "compile_error");
  EXPECT_TRUE(r[1].at("speedup").is_null());
  EXPECT_EQ(r[2].at("baseline"), "cublas");
  EXPECT_DOUBLE_EQ(r[2].at("pct_of_ceiling").get<double>(), 73.5);
}

TEST(BenchRows, GbenchHasOnlyTimedRowsInMicroseconds) {
  std::mt19937 rng(std::random_device{}());
  double config_us = 0, blas_us = 0;
  auto rows = sample_rows(rng, &config_us, &blas_us);
  const auto doc = cli::bench_gbench_json(sample_context(), rows, "host", "2026-01-01T00:00:00+00:00");
  const auto& b = doc.at("benchmarks");
  ASSERT_EQ(b.size(), 2u) << "the compile error has no place in compare.py's format";
  EXPECT_EQ(b[0].at("name"), "gemm/m=128,n=256,k=512/bf16/nt/gemm.bf16.nt.tiled.64x64x32");
  EXPECT_EQ(b[0].at("time_unit"), "us");
  EXPECT_DOUBLE_EQ(b[0].at("real_time").get<double>(), config_us);
  EXPECT_DOUBLE_EQ(b[1].at("real_time").get<double>(), blas_us);
  EXPECT_NEAR(b[1].at("bytes_per_second").get<double>(), rows[2].result.gbps * 1e9, 1e-3);
  EXPECT_EQ(doc.at("context").at("ktune_device"), "Test GPU");
}

TEST(BenchRows, TableShowsEachRowAndTheFailureReason) {
  std::mt19937 rng(std::random_device{}());
  double config_us = 0, blas_us = 0;
  auto rows = sample_rows(rng, &config_us, &blas_us);
  cli::compute_speedups(rows);
  std::ostringstream out;
  cli::print_bench_table(out, sample_context(), rows);
  const std::string text = out.str();
  EXPECT_NE(text.find("Test GPU (sm_90), gemm m=128,n=256,k=512 bf16 nt"), std::string::npos) << text;
  EXPECT_NE(text.find("gemm.bf16.nt.tiled.64x64x32"), std::string::npos) << text;
  EXPECT_NE(text.find("nvrtc said no"), std::string::npos) << text;
  EXPECT_NE(text.find("[default]"), std::string::npos) << text;
  EXPECT_NE(text.find(fmt::format("{:.3f}", config_us)), std::string::npos) << text;
  EXPECT_NE(text.find(fmt::format("{:.3f}x", blas_us / config_us)), std::string::npos) << text;
  EXPECT_NE(text.find("73.5"), std::string::npos) << text;
  EXPECT_NE(text.find("ktune devices --calibrate"), std::string::npos) << "no ceilings: says how to get them";
}

}  // namespace
}  // namespace ktune::testing
