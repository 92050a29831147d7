// ktune::Runtime serving a key whose tuned winner is a cuBLASLt algorithm (a library candidate of
// the sweep, tuner/library/library_candidates.hpp), on a GPU: the plan names the algorithm and runs it
// through cuBLASLt, directly and replayed from a CUDA graph, on contiguous and on 16-byte-aligned
// strided views, matching the float64 product; row strides the algorithm cannot take, and an
// algorithm stored by another cuBLASLt version, are served by the default config instead, still
// correct.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cache/config_cache.hpp"
#include "harness/cublaslt_algorithm.hpp"
#include "harness/device_info.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "kernel_templates/fp8_gemm/reference_fp8_gemm.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/ktune.hpp"
#include "tests/runtime/runtime_strided_gemm_gpu_util.hpp"
#include "tests/tuner/gpu_test_util.hpp"
#include "tests/tuner/loop_test_util.hpp"
#include "tuner/library/cublaslt_algorithm_source.hpp"
#include "tuner/library/library_candidates.hpp"

namespace ktune::runtime {
namespace {

namespace test = ::ktune::tuner::test;
using namespace ops_gpu_test;

/// Stores `config` as the tuned winner of gemm (m, n, k, dtype, layout) for this GPU.
void store_winner(const std::filesystem::path& db_path, const StridedGemm& g, const Config& config) {
  auto db = cache::ConfigCache::open(db_path);
  const harness::DeviceInfo dev = harness::query_device(0);
  const auto sources = kernel_templates::SourceLibrary::builtin();
  const int64_t gpu =
      db.upsert_gpu({dev.name, dev.cc_major, dev.cc_minor, dev.sm_count, dev.memory_bytes, "{}"});
  const int64_t kernel =
      db.upsert_kernel({"gemm", sources.hash(kernel_templates::kernel_source_files("gemm"))});
  const int64_t run = db.begin_run({});
  const kernel_templates::Problem p{
      {{"m", g.m}, {"n", g.n}, {"k", g.k}}, g.dtype, g.layout == Layout::kNT ? "nt" : "nn"};
  cache::Measurement m;
  m.shape = p.shape_text();
  m.dtype = g.dtype;
  m.layout = p.layout;
  m.config_name = tuner::library_canonical_name("gemm", p, config);
  m.config_json = config.to_json_text();
  m.outcome = Outcome::kOk;
  m.stats = cache::Stats{5.0, 4.9, 5.0, 5.1, 0.05, 20};
  db.set_best(db.record(run, gpu, kernel, {m}).at(0));
}

/// An algorithm cuBLASLt offers for g (its second best when it offers two: not the default choice).
Config offered(const StridedGemm& g) {
  tuner::CublasLtAlgorithmSource source(0);
  const kernel_templates::Problem p{
      {{"m", g.m}, {"n", g.n}, {"k", g.k}}, g.dtype, g.layout == Layout::kNT ? "nt" : "nn"};
  const std::vector<Config> configs = source.configs("gemm", p, 2);
  if (configs.empty()) throw Error(ErrorKind::kRuntime, "cuBLASLt offered no algorithm");
  return configs.back();
}

TEST(RuntimeLibraryGpu, ALibraryWinnerRunsThroughCublasLtDirectlyAndInAGraph) {
  KTUNE_SKIP_WITHOUT_GPU();
  test::TempDir dir;
  for (DType dt : {DType::kBF16, DType::kF32}) {
    for (Layout layout : {Layout::kNT, Layout::kNN}) {
      StridedGemm g{.m = 16, .n = 1024, .k = 512};
      g.dtype = dt;
      g.layout = layout;
      const std::string db =
          (dir / fmt::format("{}_{}.db", to_string(dt), layout == Layout::kNT ? "nt" : "nn")).string();
      const Config config = offered(g);
      store_winner(db, g, config);
      RuntimeOptions o;
      o.db_path = db;
      Runtime rt(o);
      for (bool graph : {false, true}) {
        const StridedOutcome out = run_strided_gemm(rt, g, graph, 21);
        EXPECT_NE(out.info.config_name.find(".cublaslt.v"), std::string::npos)
            << g.text() << " served by " << out.info.config_name;
        EXPECT_EQ(out.info.source, PlanInfo::Source::kTuned);
        EXPECT_EQ(out.info.launches, 1u);
        EXPECT_LE(out.error, tolerance(dt)) << g.text() << " graph=" << graph;
        EXPECT_EQ(out.outside_changed, 0) << g.text();
      }
      // Rows 16 bytes apart beyond their length, C in a wider buffer: still the library's call.
      StridedGemm wide = g;
      wide.a_pad = 8;
      wide.b_pad = 16;
      wide.c_pad = 8;
      wide.c_col = 8;
      const StridedOutcome out = run_strided_gemm(rt, wide, false, 22);
      EXPECT_NE(out.info.config_name.find(".cublaslt.v"), std::string::npos) << wide.text();
      EXPECT_LE(out.error, tolerance(dt)) << wide.text();
      EXPECT_EQ(out.outside_changed, 0) << wide.text() << ": first at " << out.first_changed;
      // A row stride of an odd number of elements: the default config serves the call.
      StridedGemm odd = g;
      odd.a_pad = 1;
      const StridedOutcome fallback = run_strided_gemm(rt, odd, false, 23);
      EXPECT_EQ(fallback.info.config_name.find(".cublaslt."), std::string::npos) << odd.text();
      EXPECT_LE(fallback.error, tolerance(dt)) << odd.text() << " served by " << fallback.info.config_name;
    }
  }
}

TEST(RuntimeLibraryGpu, AnFp8LibraryWinnerMatchesTheReferenceDirectlyAndInAGraph) {
  KTUNE_SKIP_WITHOUT_GPU();
  const harness::DeviceInfo dev = harness::query_device(0);
  if (dev.cc_major * 10 + dev.cc_minor < 89) GTEST_SKIP() << "fp8 needs sm_89+, this is " << dev.arch();
  test::TempDir dir;
  const int64_t m = 48, n = 1024, k = 512;
  const kernel_templates::Problem p{{{"m", m}, {"n", n}, {"k", k}}, DType::kFP8E4M3, "nt"};
  tuner::CublasLtAlgorithmSource source(0);
  const std::vector<Config> configs = source.configs("fp8_gemm", p, 3);
  ASSERT_FALSE(configs.empty()) << "cuBLASLt offered no fp8 algorithm";
  {
    auto db = cache::ConfigCache::open(dir / "fp8.db");
    const auto sources = kernel_templates::SourceLibrary::builtin();
    const int64_t gpu =
        db.upsert_gpu({dev.name, dev.cc_major, dev.cc_minor, dev.sm_count, dev.memory_bytes, "{}"});
    const int64_t kernel =
        db.upsert_kernel({"fp8_gemm", sources.hash(kernel_templates::kernel_source_files("fp8_gemm"))});
    cache::Measurement row;
    row.shape = p.shape_text();
    row.dtype = DType::kFP8E4M3;
    row.layout = "nt";
    row.config_name = tuner::library_canonical_name("fp8_gemm", p, configs.back());
    row.config_json = configs.back().to_json_text();
    row.stats = cache::Stats{5.0, 4.9, 5.0, 5.1, 0.05, 20};
    db.set_best(db.record(db.begin_run({}), gpu, kernel, {row}).at(0));
  }
  RuntimeOptions o;
  o.db_path = (dir / "fp8.db").string();
  Runtime rt(o);
  const auto a = random_e4m3(m * k, 61), b = random_e4m3(n * k, 62);
  auto da = DeviceBuffer::from_host<uint8_t>(a);
  auto db = DeviceBuffer::from_host<uint8_t>(b);
  const std::vector<float> sa{0.75f}, sb{1.5f};
  auto dsa = DeviceBuffer::from_host<float>(sa);
  auto dsb = DeviceBuffer::from_host<float>(sb);
  const std::vector<double> sa64{0.75}, sb64{1.5};
  const auto ref =
      kernel_templates::fp8_gemm_reference_f64(decoded(a), decoded(b), sa64, sb64, m, n, k, false);
  Output c(m * n, DType::kBF16);
  for (bool graph : {false, true}) {
    const Fp8GemmArgs args{.a = reinterpret_cast<const void*>(da.get()),
                           .b = reinterpret_cast<const void*>(db.get()),
                           .a_scale = reinterpret_cast<const float*>(dsa.get()),
                           .b_scale = reinterpret_cast<const float*>(dsb.get()),
                           .c = c.ptr(),
                           .m = m,
                           .n = n,
                           .k = k};
    const PlanInfo info = rt.prepare(args);
    EXPECT_NE(info.config_name.find("fp8_gemm.fp8e4m3.nt.cublaslt.v"), std::string::npos) << info.config_name;
    c.poison();
    run(graph, [&](Stream st) { rt.fp8_gemm(args, st); });
    EXPECT_LE(error(c.read(), ref), tolerance(DType::kBF16)) << "graph=" << graph << " " << info.config_name;
  }
}

TEST(RuntimeLibraryGpu, AnAlgorithmOfAnotherCublasLtVersionIsServedByTheDefaultConfig) {
  KTUNE_SKIP_WITHOUT_GPU();
  test::TempDir dir;
  StridedGemm g{.m = 8, .n = 768, .k = 256};
  Config stale = offered(g);
  stale.set("VERSION", stale.at("VERSION") + 1);
  store_winner(dir / "stale.db", g, stale);
  RuntimeOptions o;
  o.db_path = (dir / "stale.db").string();
  Runtime rt(o);
  const StridedOutcome out = run_strided_gemm(rt, g, false, 31);
  EXPECT_EQ(out.info.config_name.find(".cublaslt."), std::string::npos) << out.info.config_name;
  EXPECT_EQ(out.info.source, PlanInfo::Source::kDefault);
  EXPECT_LE(out.error, tolerance(g.dtype));
}

}  // namespace
}  // namespace ktune::runtime
