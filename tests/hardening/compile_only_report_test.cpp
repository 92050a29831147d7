// A compile-only sweep's database (written by the tuning loop with a fake compiler, as
// `ktune tune --compile-only` writes it) gives reports that say nothing was measured, not "no
// config of this kernel ran correctly": Markdown and HTML in text, JSON in its "kernels" entry, CSV
// in each row's reason; a sweep whose configs all failed on a GPU still says that.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "kernel_templates/embedded_sources.hpp"
#include "reports/report_loader.hpp"
#include "reports/reporter.hpp"
#include "tests/tuner/loop_test_util.hpp"
#include "tuner/inputs/shape_set.hpp"
#include "tuner/loop/tuning_loop.hpp"

namespace ktune::tuner {
namespace {

const cache::GpuInfo kGpu{"compile-only sm_90", 9, 0, 132, 0, "{}"};
const char* const kChartJs = "/usr/share/javascript/chart.js/chart.min.js";

/// A compile-only sweep of one gemm key: some configs compile (skipped: "compile-only"), the ones
/// with BLOCK_M = 128 fail to compile.
void compile_only_sweep(cache::ConfigCache& db) {
  const auto sources = kernel_templates::SourceLibrary::builtin();
  TuneOptions o;
  o.strategy = "random";
  o.budget = 24;
  o.compile_threads = 2;
  o.counters = false;
  o.compile_only = true;
  LoopDeps deps{test::fake_compile(64, "<128,"), nullptr, &sources, nullptr};
  TuningLoop loop(db, kGpu, cache::RunInfo{}, o, deps);
  const KeySummary s =
      loop.tune(ConfigSpace::load(configs_dir() / "spaces" / "gemm.toml"),
                {"gemm", NamedShape{"test", {{"m", 48}, {"n", 2048}, {"k", 1536}}}, DType::kBF16, "nt"});
  ASSERT_TRUE(s.error.empty()) << s.error;
  ASSERT_FALSE(s.winner.has_value());
}

std::string report(const cache::ConfigCache& db, const std::string& format) {
  const reports::ReportData data = reports::load_report_data(db, {});
  std::ostringstream out;
  reports::make_reporter(format)->write(data, out);
  return out.str();
}

TEST(CompileOnlyReport, SaysTheSweepWasCompileOnly) {
  test::TempDir dir;
  auto db = cache::ConfigCache::open(dir / "co.db");
  compile_only_sweep(db);
  const std::string md = report(db, "md");
  EXPECT_NE(md.find("compile-only sweep"), std::string::npos) << md;
  EXPECT_NE(md.find("nothing was measured"), std::string::npos) << md;
  EXPECT_EQ(md.find("ran correctly"), std::string::npos) << md;
  const nlohmann::json json = nlohmann::json::parse(report(db, "json"));
  ASSERT_EQ(json["kernels"].size(), 1u);
  EXPECT_EQ(json["kernels"][0]["name"], "gemm");
  EXPECT_EQ(json["kernels"][0]["compile_only"], true);
  EXPECT_NE(json["kernels"][0]["no_winner"].get<std::string>().find("nothing was measured"),
            std::string::npos);
  EXPECT_TRUE(json["winners"].empty());
  // CSV, one row a measurement, says it in each compiled config's reason.
  const std::string csv = report(db, "csv");
  EXPECT_NE(csv.find(",skipped,compile-only,"), std::string::npos);

  // What was compiled is shown: each compiled config's registers (the fake compiler's 64), and the
  // occupancy they allow, in every format.
  EXPECT_NE(md.find("Compiled configs"), std::string::npos) << md;
  EXPECT_NE(md.find("| registers | shared memory | spills | threads | blocks/SM |"), std::string::npos) << md;
  size_t compiled = 0;
  for (const nlohmann::json& m : json["measurements"]) {
    if (m["reason"] != "compile-only") {
      EXPECT_TRUE(m["compiled"].is_null()) << m.dump();  // a compile error records no registers
      continue;
    }
    ++compiled;
    const nlohmann::json& c = m["compiled"];
    ASSERT_TRUE(c.is_object()) << m.dump();
    EXPECT_EQ(c["registers"], 64);
    const int64_t threads = c["threads_per_block"], shared = c["shared_bytes"];
    const int64_t warps = (threads + 31) / 32;
    const int64_t by_registers = 65536 / (64 * 32 * warps);
    const int64_t by_shared = shared > 0 ? 233472 / (shared + 1024) : 32;
    const int64_t expected = std::min({int64_t{32}, 2048 / threads, by_registers, by_shared});
    EXPECT_EQ(c["blocks_per_sm"].get<int64_t>(), expected) << c.dump();
    EXPECT_NE(md.find(m["config_name"].get<std::string>()), std::string::npos) << m["config_name"];
  }
  EXPECT_GT(compiled, 0u);
  EXPECT_NE(
      csv.find(",registers,shared_bytes,spill_bytes,threads_per_block,blocks_per_sm,occupancy_limited_by"),
      std::string::npos);
  if (!std::filesystem::exists(kChartJs))
    GTEST_SKIP() << "no Chart.js at " << kChartJs << " for the HTML report";
  const std::string html = report(db, "html");
  EXPECT_NE(html.find("compile-only sweep"), std::string::npos);
  EXPECT_NE(html.find("nothing was measured"), std::string::npos);
  EXPECT_EQ(html.find("ran correctly"), std::string::npos);
  EXPECT_EQ(html.find("id=\"winners-0\""), std::string::npos);    // no empty winners table
  EXPECT_NE(html.find("id=\"resources-0\""), std::string::npos);  // the compiled configs' table
}

TEST(CompileOnlyReport, AMeasuredSweepWithoutAWinnerStillSaysNothingRanCorrectly) {
  test::TempDir dir;
  auto db = cache::ConfigCache::open(dir / "co.db");
  compile_only_sweep(db);
  // One config of the same key ran on a GPU and was wrong: the kernel was measured after all.
  const int64_t gpu = db.upsert_gpu(kGpu);
  const int64_t kernel = db.upsert_kernel({"gemm", test::all_measurements(db).front().kernel.source_hash});
  const int64_t run = db.begin_run({});
  cache::Measurement wrong = test::all_measurements(db).front().m;
  wrong.config_name += ".measured";
  wrong.outcome = Outcome::kIncorrect;
  wrong.reason = "rel_err 0.4 > tolerance 0.02";
  db.record(run, gpu, kernel, {wrong});
  const std::string md = report(db, "md");
  EXPECT_NE(md.find("no config of this kernel ran correctly"), std::string::npos) << md;
  EXPECT_EQ(md.find("compile-only sweep"), std::string::npos) << md;
  const nlohmann::json json = nlohmann::json::parse(report(db, "json"));
  EXPECT_EQ(json["kernels"][0]["compile_only"], false);
  EXPECT_EQ(json["kernels"][0]["no_winner"], "no config of this kernel ran correctly");
}

}  // namespace
}  // namespace ktune::tuner
