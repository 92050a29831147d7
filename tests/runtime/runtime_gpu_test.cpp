// ktune::Runtime on a GPU: the reference answer for odd and round shapes, tuned, nearest and default
// configs, from inside a captured CUDA graph, and the D8 checks that refuse a bad call.

#include <gtest/gtest.h>

#include <cuda.h>

#include <fstream>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/driver_api.hpp"
#include "ktune/ktune.hpp"
#include "tests/runtime/runtime_strided_gemm_gpu_util.hpp"
#include "tests/tuner/gpu_test_util.hpp"
#include "tests/tuner/loop_test_util.hpp"

namespace ktune::runtime {
namespace {

namespace test = ::ktune::tuner::test;
namespace gpu_test = ::ktune::tuner::gpu_test;

using namespace gpu_test;

struct Problem {
  int64_t m, n, k;
  bool nt = true;
};

/// Runs one gemm through `rt` (optionally inside a captured graph) and returns the max error.
double run_gemm(Runtime& rt, const Problem& p, bool in_graph) {
  const auto a = random_bf16(static_cast<size_t>(p.m * p.k), 1);
  const auto b = random_bf16(static_cast<size_t>(p.n * p.k), 2);
  auto da = harness::DeviceBuffer::from_host<uint16_t>(a);
  auto db = harness::DeviceBuffer::from_host<uint16_t>(b);
  harness::DeviceBuffer dc(static_cast<size_t>(p.m * p.n) * 2);
  dc.fill_u8(0xFF);
  GemmArgs g{.a = reinterpret_cast<const void*>(da.get()),
             .b = reinterpret_cast<const void*>(db.get()),
             .c = reinterpret_cast<void*>(dc.get()),
             .m = p.m,
             .n = p.n,
             .k = p.k,
             .layout = p.nt ? Layout::kNT : Layout::kNN};
  auto call = [&](CUstream s) { rt.gemm(g, reinterpret_cast<Stream>(s)); };
  const auto& d = harness::driver();
  if (!in_graph) {
    call(nullptr);
  } else {
    rt.prepare(g);
    CUstream s = nullptr;
    KTUNE_CU_CHECK(d.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    KTUNE_CU_CHECK(d.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    call(s);
    CUgraph graph = nullptr;
    KTUNE_CU_CHECK(d.cuStreamEndCapture(s, &graph));
    CUgraphExec exec = nullptr;
    KTUNE_CU_CHECK(d.cuGraphInstantiateWithFlags(&exec, graph, 0));
    KTUNE_CU_CHECK(d.cuGraphLaunch(exec, s));
    KTUNE_CU_CHECK(d.cuStreamSynchronize(s));
    KTUNE_CU_CHECK(d.cuGraphExecDestroy(exec));
    KTUNE_CU_CHECK(d.cuGraphDestroy(graph));
    KTUNE_CU_CHECK(d.cuStreamDestroy(s));
  }
  const auto c = dc.download_as<uint16_t>(static_cast<size_t>(p.m * p.n));
  return gemm_error(a, b, c, p.m, p.n, p.k, p.nt);
}

TEST(RuntimeGpu, DefaultConfigGivesTheReferenceAnswer) {
  KTUNE_SKIP_WITHOUT_GPU();
  test::TempDir dir;
  RuntimeOptions o;
  o.db_path = (dir / "none.db").string();  // no database: every shape is a miss
  Runtime rt(o);
  for (const Problem& p : {Problem{37, 301, 515}, Problem{16, 4096, 4096}, Problem{128, 256, 512, false}}) {
    const PlanInfo info =
        rt.prepare(GemmArgs{.m = p.m, .n = p.n, .k = p.k, .layout = p.nt ? Layout::kNT : Layout::kNN});
    EXPECT_EQ(info.source, PlanInfo::Source::kDefault);
    EXPECT_LE(run_gemm(rt, p, false), kBf16Tolerance)
        << p.m << "x" << p.n << "x" << p.k << " " << info.config_name;
    EXPECT_LE(run_gemm(rt, p, true), kBf16Tolerance) << "in a graph: " << info.config_name;
  }
}

TEST(RuntimeGpu, TunedAndNearestConfigsGiveTheReferenceAnswerAlsoInAGraph) {
  KTUNE_SKIP_WITHOUT_GPU();
  use_ktune_binary();
  test::TempDir dir;
  const std::string db = (dir / "t.db").string();
  // A small real sweep of two shapes (random strategy: a mix of templates), through the CLI.
  for (const char* shape : {"m=16,n=4096,k=4096", "m=64,n=1024,k=1024"}) {
    const std::string cmd =
        std::string(std::getenv("KTUNE_BIN")) + " tune --kernel gemm --shape " + shape +
        " --dtype bf16 --strategy random --budget 12 --max-time-ms 50 --no-counters --db " + db +
        " > /dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  RuntimeOptions o;
  o.db_path = db;
  Runtime rt(o);
  EXPECT_GE(rt.tuned_keys(), 2u);
  const PlanInfo tuned = rt.prepare(GemmArgs{.m = 16, .n = 4096, .k = 4096});
  EXPECT_EQ(tuned.source, PlanInfo::Source::kTuned);
  EXPECT_LE(run_gemm(rt, {16, 4096, 4096}, false), kBf16Tolerance) << tuned.config_name;
  EXPECT_LE(run_gemm(rt, {16, 4096, 4096}, true), kBf16Tolerance) << tuned.config_name;
  const PlanInfo near = rt.prepare(GemmArgs{.m = 13, .n = 4000, .k = 4100});
  // Not tuned: the nearest tuned shape's config when it serves 13x4000x4100, else the default.
  EXPECT_NE(near.source, PlanInfo::Source::kTuned) << near.config_name;
  if (near.source == PlanInfo::Source::kNearest) {
    EXPECT_FALSE(near.tuned_shape.empty());
  }
  EXPECT_LE(run_gemm(rt, {13, 4000, 4100}, true), kBf16Tolerance) << near.config_name;

  RuntimeOptions strict = o;
  strict.on_miss = MissPolicy::kError;
  Runtime rt_strict(strict);
  try {
    rt_strict.prepare(GemmArgs{.m = 13, .n = 4000, .k = 4100});
    ADD_FAILURE() << "a miss with MissPolicy::kError must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_NE(std::string(e.what()).find("ktune tune"), std::string::npos) << e.what();
  }
}

TEST(RuntimeGpu, TmaConfigsRunThroughTensorMapsAlsoInAGraph) {
  // A tuned wgmma_tma config (its A and B reach the kernel as tensor maps the runtime encodes from
  // the caller's pointers at each launch); odd M and N (zero-filled boxes).
  KTUNE_SKIP_WITHOUT_GPU();
  use_ktune_binary();
  test::TempDir dir;
  const std::string db = (dir / "tma.db").string();
  const std::string space = (dir / "tma.toml").string();
  std::ofstream(space) << R"(kernel = "gemm"
dims = ["m", "n", "k"]
description = "the TMA-fed wgmma template only"
[[template]]
name = "wgmma_tma"
layouts = ["nt"]
[template.params]
BLOCK_M = [64, 128]
BLOCK_N = [128]
BLOCK_K = [64]
STAGES = [4]
SPLIT_K = [1]
SWIZZLE = [8]
)";
  const std::string cmd = std::string(std::getenv("KTUNE_BIN")) +
                          " tune --kernel gemm --shape m=200,n=300,k=520 --dtype bf16 --space " + space +
                          " --strategy exhaustive --max-time-ms 50 --no-counters --db " + db +
                          " > /dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  RuntimeOptions o;
  o.db_path = db;
  Runtime rt(o);
  const PlanInfo info = rt.prepare(GemmArgs{.m = 200, .n = 300, .k = 520});
  EXPECT_EQ(info.source, PlanInfo::Source::kTuned);
  EXPECT_NE(info.config_name.find("wgmma_tma"), std::string::npos) << info.config_name;
  EXPECT_LE(run_gemm(rt, {200, 300, 520}, false), kBf16Tolerance) << info.config_name;
  EXPECT_LE(run_gemm(rt, {200, 300, 520}, true), kBf16Tolerance) << info.config_name;

  // Strided views: rows that stay 16-byte aligned are read through the maps (the tuned config);
  // an lda or ldb that is not a multiple of 8 bf16 cannot be a map's stride, so the call (and
  // prepare, which says so) goes to the default config. C's stride is free either way. A pointer
  // that misses 16 bytes also goes to the default config (prepare sees no pointer: not checked).
  namespace ops = ops_gpu_test;
  enum class Served { kTma, kDefault, kEither };
  struct Case {
    ops::StridedGemm g;
    Served served;
  };
  const Case cases[] = {
      {{.m = 200, .n = 300, .k = 520, .a_pad = 8, .a_col = 16, .b_pad = 24, .c_pad = 7, .c_col = 300},
       Served::kTma},
      {{.m = 200, .n = 300, .k = 520, .c_pad = 1, .c_col = 3}, Served::kTma},
      {{.m = 200, .n = 300, .k = 520, .a_pad = 3}, Served::kDefault},
      {{.m = 200, .n = 300, .k = 520, .b_pad = 5, .c_pad = 600}, Served::kDefault},
      {{.m = 200, .n = 300, .k = 520, .a_col = 3}, Served::kEither},
  };
  for (const Case& c : cases) {
    for (bool graph : {false, true}) {
      const ops::StridedOutcome out = ops::run_strided_gemm(rt, c.g, graph, 31);
      if (c.served != Served::kEither) {
        const bool tma = c.served == Served::kTma;
        EXPECT_EQ(out.info.source == PlanInfo::Source::kTuned, tma)
            << c.g.text() << ": " << out.info.config_name;
        EXPECT_EQ(out.info.config_name.find("wgmma_tma") != std::string::npos, tma)
            << c.g.text() << ": " << out.info.config_name;
      }
      EXPECT_LE(out.error, ops::tolerance(DType::kBF16))
          << c.g.text() << " graph=" << graph << " prepared as " << out.info.config_name;
      EXPECT_EQ(out.outside_changed, 0)
          << c.g.text() << " graph=" << graph << " prepared as " << out.info.config_name << ": changed "
          << out.outside_changed << " elements outside C's view, first at " << out.first_changed;
    }
  }
}

TEST(RuntimeGpu, RefusesBadCallsBeforeLaunching) {
  KTUNE_SKIP_WITHOUT_GPU();
  test::TempDir dir;
  RuntimeOptions o;
  o.db_path = (dir / "none.db").string();
  Runtime rt(o);
  harness::DeviceBuffer buf(1 << 20);
  const auto base = reinterpret_cast<char*>(buf.get());
  auto expect_bad = [&](const std::function<void()>& fn, const std::string& part) {
    try {
      fn();
      ADD_FAILURE() << "expected kBadInput mentioning " << part;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  const GemmArgs ok{.a = base, .b = base, .c = base + 4096, .m = 8, .n = 8, .k = 8};
  auto with = [&](auto change) {
    GemmArgs g = ok;
    change(g);
    return g;
  };
  expect_bad([&] { rt.gemm(with([](GemmArgs& g) { g.m = 0; }), nullptr); }, "m=0");
  expect_bad([&] { rt.gemm(with([](GemmArgs& g) { g.a = nullptr; }), nullptr); }, "a is null");
  expect_bad([&] { rt.gemm(with([&](GemmArgs& g) { g.a = base + 1; }), nullptr); }, "not aligned");
  expect_bad(
      [&] {
        rt.gemm(with([&](GemmArgs& g) {
                  g.b = base + 2;
                  g.dtype = DType::kF32;
                }),
                nullptr);
      },
      "not aligned");
  expect_bad([&] { rt.gemm(with([](GemmArgs& g) { g.epilogue = Epilogue::kBias; }), nullptr); },
             "bias is null");
  expect_bad([&] { rt.gemm(with([](GemmArgs& g) { g.lda = 7; }), nullptr); }, "lda=7");
  expect_bad([&] { rt.gemm(with([](GemmArgs& g) { g.dtype = DType::kFP8E4M3; }), nullptr); }, "fp8");
  // The first call of a key inside capture: a clear error, and the capture is not broken by a launch.
  const auto& d = harness::driver();
  CUstream s = nullptr;
  KTUNE_CU_CHECK(d.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  KTUNE_CU_CHECK(d.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  expect_bad(
      [&] {
        rt.gemm(GemmArgs{.a = base, .b = base, .c = base + 8192, .m = 8, .n = 9, .k = 10},
                reinterpret_cast<Stream>(s));
      },
      "Runtime::prepare");
  CUgraph graph = nullptr;
  EXPECT_EQ(d.cuStreamEndCapture(s, &graph), CUDA_SUCCESS);
  if (graph != nullptr) d.cuGraphDestroy(graph);
  d.cuStreamDestroy(s);
}

}  // namespace
}  // namespace ktune::runtime
