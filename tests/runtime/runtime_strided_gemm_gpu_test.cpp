// ktune::Runtime's gemm on strided views, on a GPU: the Q, K and V projections of a decode step
// written straight into their column slices of a fused output buffer (ldc > n), from an
// activation that is itself a column slice (lda > k), with weights in padded rows (ldb > the row);
// each call directly and replayed from a captured CUDA graph, served by the default configs (gemv
// for m <= 16, mma for f16/bf16 beyond, tiled for f32), both layouts, with epilogues. Every call
// is checked against the float64 product of the views, and every element around C's view (the
// other slices' columns, the padding) must keep its sentinel. The tuned wgmma_tma config's
// strided calls are in runtime_gpu_test.cpp (TmaConfigsRunThroughTensorMapsAlsoInAGraph).

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "ktune/ktune.hpp"
#include "tests/runtime/runtime_strided_gemm_gpu_util.hpp"
#include "tests/tuner/gpu_test_util.hpp"
#include "tests/tuner/loop_test_util.hpp"

namespace ktune::runtime {
namespace {

namespace test = ::ktune::tuner::test;
using namespace ops_gpu_test;

class RuntimeStridedGemmGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    KTUNE_SKIP_WITHOUT_GPU();
    RuntimeOptions o;
    o.db_path = (dir_ / "none.db").string();  // no database: the default configs
    rt_ = std::make_unique<Runtime>(o);
  }

  /// Runs `g` directly and in a graph; both must match the reference and leave C's surroundings.
  void expect_matches(const StridedGemm& g, uint32_t seed) {
    for (bool graph : {false, true}) {
      const StridedOutcome out = run_strided_gemm(*rt_, g, graph, seed);
      EXPECT_LE(out.error, tolerance(g.dtype))
          << g.text() << " graph=" << graph << " served by " << out.info.config_name;
      EXPECT_EQ(out.outside_changed, 0)
          << g.text() << " graph=" << graph << " served by " << out.info.config_name << ": changed "
          << out.outside_changed << " elements outside C's view, first at " << out.first_changed;
    }
  }

  test::TempDir dir_;
  std::unique_ptr<Runtime> rt_;
};

TEST_F(RuntimeStridedGemmGpu, QkvProjectionsWriteTheirSlicesOfOneFusedOutput) {
  // Hidden 512 (x is columns [64, 576) of a [m, 640] buffer), q 1024 wide, k and v 256: each
  // projection into its slice of a fused-width output [m, 1536 + 8] whose other columns (the other
  // slices, the padding) must keep their sentinel; the weights' rows padded by 8. (The Python GPU
  // test writes all three into one shared torch tensor.)
  const int64_t k = 512, nq = 1024, nkv = 256, ldc = nq + 2 * nkv + 8;
  for (int64_t m : {1, 16, 37}) {
    for (DType dt : {DType::kBF16, DType::kF16, DType::kF32}) {
      const struct { int64_t n, col; } slices[] = {{nq, 0}, {nkv, nq}, {nkv, nq + nkv}};
      uint32_t seed = 11;
      for (const auto& s : slices) {
        StridedGemm g{.m = m, .n = s.n, .k = k};
        g.a_col = 64;
        g.a_pad = 64;
        g.b_pad = 8;
        g.c_col = s.col;
        g.c_pad = ldc - s.col - s.n;
        g.dtype = dt;
        expect_matches(g, seed += 10);
      }
    }
  }
}

TEST_F(RuntimeStridedGemmGpu, OddStridesBothLayoutsAndEpilogues) {
  // Strides that keep no 16-byte rows (the element paths), odd sizes, C the middle of three
  // slices; the f16/bf16 epilogues go to the mma template (the default template has none).
  for (DType dt : {DType::kBF16, DType::kF16}) {
    for (Layout layout : {Layout::kNT, Layout::kNN}) {
      for (Epilogue epi : {Epilogue::kNone, Epilogue::kBias, Epilogue::kBiasSilu}) {
        for (int64_t m : {7, 37}) {
          StridedGemm g{.m = m, .n = 301, .k = 515};
          g.a_col = 5;
          g.a_pad = 13;
          g.b_col = 3;
          g.b_pad = 7;
          g.c_col = 301;
          g.c_pad = 302;
          g.layout = layout;
          g.epilogue = epi;
          g.dtype = dt;
          expect_matches(g, 101);
        }
      }
    }
  }
  // f32 (tiled) on both layouts, strides alone and together.
  for (Layout layout : {Layout::kNT, Layout::kNN}) {
    StridedGemm g{.m = 33, .n = 65, .k = 131};
    g.layout = layout;
    g.dtype = DType::kF32;
    g.a_pad = 3;
    expect_matches(g, 201);
    g = {.m = 33, .n = 65, .k = 131, .b_pad = 4, .layout = layout, .dtype = DType::kF32};
    expect_matches(g, 211);
    g = {.m = 33, .n = 65, .k = 131, .c_pad = 5, .c_col = 2, .layout = layout, .dtype = DType::kF32};
    expect_matches(g, 221);
  }
}

TEST_F(RuntimeStridedGemmGpu, AStrideShorterThanItsRowIsRefusedBeforeLaunching) {
  const GemmArgs g{.m = 8, .n = 8, .k = 8, .lda = 7};
  try {
    rt_->prepare(g);
    ADD_FAILURE() << "lda=7 < k=8 must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find("lda=7"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ktune::runtime
