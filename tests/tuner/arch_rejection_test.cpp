// KernelSpec::arch_rejection in the tuning loop: a template the target arch lacks is stored as
// `skipped` with the template's reason and never reaches the compiler (a fake compiler here that
// fails every such template, so a missed check shows up as a compile_error). wgmma configs of a
// gemm sweep for sm_80 and every fp8_gemm config for sm_80; the same sweeps for sm_90 compile them.

#include <gtest/gtest.h>

#include <map>

#include "kernel_templates/fp8_gemm/fp8_gemm_spec.hpp"
#include "kernel_templates/gemm/gemm_wgmma_spec.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "tests/tuner/loop_test_util.hpp"
#include "tuner/loop/tuning_loop.hpp"
#include "tuner/space/arch_limits.hpp"

namespace ktune::tuner {
namespace {

struct ArchSweep {
  std::vector<cache::StoredMeasurement> rows;
  int compiles = 0;
  KeySummary summary;
};

/// A compile-only exhaustive sweep of `key` for `arch`; the fake compiler fails any name expression
/// containing `fail_marker`.
ArchSweep sweep(const std::filesystem::path& db_path, const std::string& arch, const TuneKey& key,
                const std::string& fail_marker) {
  auto db = cache::ConfigCache::open(db_path);
  static const auto sources = kernel_templates::SourceLibrary::builtin();
  const ArchLimits limits = arch_limits(arch);
  TuneOptions o;
  o.strategy = "exhaustive";
  o.budget = 0;
  o.compile_only = true;
  o.compile_threads = 2;
  o.counters = false;
  o.arch = arch;
  o.limits = limits.limits;
  std::atomic<int> compiles{0};
  LoopDeps deps{test::fake_compile(64, fail_marker, &compiles), nullptr, &sources, nullptr};
  ArchSweep out;
  {
    TuningLoop loop(db, compile_only_gpu(arch, limits), cache::RunInfo{}, o, deps);
    out.summary = loop.tune(ConfigSpace::load(configs_dir() / "spaces" / (key.kernel + ".toml")), key);
  }
  out.rows = test::all_measurements(db);
  out.compiles = compiles;
  return out;
}

// M >= 128, so that the space keeps wgmma configs (its large_m rule).
const TuneKey kGemmKey{"gemm", NamedShape{"arch", {{"m", 384}, {"n", 1536}, {"k", 768}}}, DType::kBF16, "nt"};
const TuneKey kFp8Key{"fp8_gemm", NamedShape{"arch", {{"m", 96}, {"n", 640}, {"k", 1152}}}, DType::kFP8E4M3,
                      "nt"};

TEST(ArchRejection, TheHookCallsEachTemplatesRule) {
  const auto& wgmma = kernel_templates::find_spec("gemm", "wgmma");
  const auto& fp8 = kernel_templates::find_spec("fp8_gemm", "mma");
  const auto& mma = kernel_templates::find_spec("gemm", "mma");
  for (const char* arch : {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100"}) {
    EXPECT_EQ(wgmma.arch_rejection(arch), kernel_templates::WgmmaGemmSpec::rejection_for_arch(arch)) << arch;
    EXPECT_EQ(fp8.arch_rejection(arch), kernel_templates::Fp8GemmSpec::rejection_for_arch(arch)) << arch;
    EXPECT_EQ(mma.arch_rejection(arch), std::nullopt) << arch;
  }
  EXPECT_TRUE(wgmma.arch_rejection("sm_80").has_value());
  EXPECT_FALSE(wgmma.arch_rejection("sm_90a").has_value());
  EXPECT_TRUE(fp8.arch_rejection("sm_86").has_value());
  EXPECT_FALSE(fp8.arch_rejection("sm_89").has_value());
}

TEST(ArchRejection, GemmSweepForSm80SkipsWgmmaWithTheReasonAndCompilesTheRest) {
  test::TempDir dir;
  const ArchSweep s = sweep(dir / "g80.db", "sm_80", kGemmKey, "ktune_gemm_wgmma<");
  ASSERT_TRUE(s.summary.error.empty()) << s.summary.error;
  const auto why = kernel_templates::WgmmaGemmSpec::rejection_for_arch("sm_80");
  ASSERT_TRUE(why.has_value());
  int wgmma = 0;
  int others_compiled = 0;
  for (const auto& r : s.rows) {
    EXPECT_NE(r.m.outcome, ktune::Outcome::kCompileError) << r.m.config_name << ": " << r.m.reason;
    if (r.m.config_name.find(".wgmma.") != std::string::npos) {
      ++wgmma;
      EXPECT_EQ(r.m.outcome, ktune::Outcome::kSkipped) << r.m.config_name;
      EXPECT_EQ(r.m.reason, *why) << r.m.config_name;
      EXPECT_NE(r.m.reason.find("sm_80"), std::string::npos) << r.m.reason;
    } else if (r.m.reason == "compile-only") {
      ++others_compiled;
    }
  }
  EXPECT_GT(wgmma, 0) << "the space should offer wgmma configs for sm_80's limits";
  EXPECT_GT(others_compiled, 0);
  EXPECT_EQ(s.compiles, others_compiled) << "no wgmma config may reach the compiler";

  // For sm_90 the same configs compile (the marker fails nothing: no wgmma configs failed above).
  const ArchSweep h = sweep(dir / "g90.db", "sm_90", kGemmKey, "");
  int wgmma90 = 0;
  for (const auto& r : h.rows) {
    if (r.m.config_name.find(".wgmma.") == std::string::npos) continue;
    ++wgmma90;
    EXPECT_NE(r.m.reason, *why) << r.m.config_name;
  }
  EXPECT_GT(wgmma90, 0);
}

TEST(ArchRejection, Fp8GemmSweepForSm80IsAllSkippedWithTheReason) {
  test::TempDir dir;
  const ArchSweep s = sweep(dir / "f80.db", "sm_80", kFp8Key, "ktune_fp8_gemm");
  ASSERT_TRUE(s.summary.error.empty()) << s.summary.error;
  const auto why = kernel_templates::Fp8GemmSpec::rejection_for_arch("sm_80");
  ASSERT_TRUE(why.has_value());
  // The wgmma variant (sm_90a only) gives its own reason.
  const auto wgmma_why = kernel_templates::find_spec("fp8_gemm", "wgmma_tma").arch_rejection("sm_80");
  ASSERT_TRUE(wgmma_why.has_value());
  ASSERT_FALSE(s.rows.empty());
  for (const auto& r : s.rows) {
    EXPECT_EQ(r.m.outcome, ktune::Outcome::kSkipped) << r.m.config_name;
    const bool wgmma = r.m.config_name.find(".wgmma_tma.") != std::string::npos;
    EXPECT_EQ(r.m.reason, wgmma ? *wgmma_why : *why) << r.m.config_name;
  }
  EXPECT_NE(why->find("sm_89"), std::string::npos) << *why;
  EXPECT_EQ(s.compiles, 0);
  EXPECT_EQ(s.summary.evaluations, s.rows.size());

  const ArchSweep ada = sweep(dir / "f89.db", "sm_89", kFp8Key, "");
  ASSERT_FALSE(ada.rows.empty());
  EXPECT_GT(ada.compiles, 0);
  for (const auto& r : ada.rows) EXPECT_NE(r.m.reason, *why) << r.m.config_name;
}

}  // namespace
}  // namespace ktune::tuner
