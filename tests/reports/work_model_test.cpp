#include "reports/work_model.hpp"

#include <gtest/gtest.h>

#include <random>

#include "reports/roofline.hpp"

namespace ktune::reports {
namespace {

using DimList = std::vector<std::pair<std::string, int64_t>>;

TEST(WorkModel, GemmByHand) {
  // m=16, n=4096, k=4096 in bf16: 2*16*4096*4096 FLOPs; A 16x4096 + B 4096x4096 read, C 16x4096 written.
  const DimList dims{{"m", 16}, {"n", 4096}, {"k", 4096}};
  const Work w = work_model("gemm", dims, "bf16");
  ASSERT_TRUE(w.flops && w.bytes);
  EXPECT_DOUBLE_EQ(*w.flops, 536870912.0);
  EXPECT_DOUBLE_EQ(*w.bytes, (65536.0 + 16777216.0) * 2 + 65536.0 * 2);
}

TEST(WorkModel, Fp8GemmWritesBf16) {
  const DimList dims{{"k", 64}, {"m", 128}, {"n", 32}};  // order must not matter
  const Work w = work_model("fp8_gemm", dims, "fp8e4m3");
  ASSERT_TRUE(w.flops && w.bytes);
  EXPECT_DOUBLE_EQ(*w.flops, 2.0 * 128 * 32 * 64);
  EXPECT_DOUBLE_EQ(*w.bytes, (128.0 * 64 + 32.0 * 64) * 1 + 128.0 * 32 * 2);
}

TEST(WorkModel, CopyRandomSizes) {
  std::mt19937 rng(3);
  for (int i = 0; i < 50; ++i) {
    const int64_t n = 1 + rng() % 100'000'000;
    const DimList dims{{"n", n}};
    EXPECT_DOUBLE_EQ(*work_model("copy", dims, "f32").bytes, 8.0 * static_cast<double>(n));
    EXPECT_FALSE(work_model("copy", dims, "f32").flops);
  }
}

TEST(WorkModel, UnknownKernelDtypeOrDimensionGiveNothing) {
  const DimList dims{{"m", 3}, {"n", 5}, {"k", 7}};
  EXPECT_FALSE(work_model("softmax", dims, "f16").bytes);
  EXPECT_FALSE(work_model("gemm", dims, "int3").flops);
  const DimList partial{{"m", 3}, {"n", 5}};
  EXPECT_FALSE(work_model("gemm", partial, "bf16").flops);
}

TEST(Roofline, ComputeBoundGemm) {
  const Ceilings c = ceilings_for(R"({"bf16_tflops":800,"copy_gbps":4000})", "bf16");
  ASSERT_TRUE(c.tflops && c.gbps);
  const Work w{.flops = 1.6e15, .bytes = 4e9};  // 2 s at peak math, 1 ms at peak bandwidth
  const Roofline r = roofline(w, c, 4e6);       // 4 s measured
  EXPECT_EQ(r.bound, "compute");
  EXPECT_DOUBLE_EQ(*r.pct_of_ceiling, 50.0);
  EXPECT_DOUBLE_EQ(*r.tflops, 400.0);
  EXPECT_DOUBLE_EQ(*r.gbps, 1.0);
}

TEST(Roofline, MemoryBoundCopyAndMissingCeilings) {
  const Ceilings c = ceilings_for(R"({"copy_gbps":2000})", "f32");
  const Roofline r = roofline(Work{.bytes = 1e9}, c, 1000);  // 1 GB in 1 ms = 1000 GB/s
  EXPECT_EQ(r.bound, "memory");
  EXPECT_DOUBLE_EQ(*r.gbps, 1000.0);
  EXPECT_DOUBLE_EQ(*r.pct_of_ceiling, 50.0);
  const Roofline none = roofline(Work{.bytes = 1e9}, ceilings_for("not json", "f32"), 1000);
  EXPECT_FALSE(none.pct_of_ceiling);
  EXPECT_TRUE(none.gbps);
  EXPECT_FALSE(ceilings_for(R"({"bf16_tflops":"fast"})", "bf16").tflops);
  EXPECT_DOUBLE_EQ(*ceilings_for(R"({"fp8_tflops":1900})", "fp8e4m3").tflops, 1900.0);
}

}  // namespace
}  // namespace ktune::reports
