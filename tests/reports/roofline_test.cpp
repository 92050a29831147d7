#include "reports/roofline.hpp"

#include <gtest/gtest.h>

namespace ktune::reports {
namespace {

TEST(Roofline, ComputeBoundGemm) {
  const Ceilings c = ceilings_for(R"({"bf16_tflops":800,"copy_gbps":4000})", DType::kBF16);
  ASSERT_TRUE(c.tflops && c.gbps);
  const Work w{.flops = 1.6e15, .bytes = 4e9};  // 2 s at peak math, 1 ms at peak bandwidth
  const Roofline r = roofline(w, c, 4e6);       // 4 s measured
  EXPECT_EQ(r.bound, "compute");
  EXPECT_DOUBLE_EQ(*r.pct_of_ceiling, 50.0);
  EXPECT_DOUBLE_EQ(*r.tflops, 400.0);
  EXPECT_DOUBLE_EQ(*r.gbps, 1.0);
}

TEST(Roofline, MemoryBoundCopyAndMissingCeilings) {
  const Ceilings c = ceilings_for(R"({"copy_gbps":2000})", DType::kF32);
  const Roofline r = roofline(Work{.bytes = 1e9}, c, 1000);  // 1 GB in 1 ms = 1000 GB/s
  EXPECT_EQ(r.bound, "memory");
  EXPECT_DOUBLE_EQ(*r.gbps, 1000.0);
  EXPECT_DOUBLE_EQ(*r.pct_of_ceiling, 50.0);
  const Roofline none = roofline(Work{.bytes = 1e9}, ceilings_for("not json", DType::kF32), 1000);
  EXPECT_FALSE(none.pct_of_ceiling);
  EXPECT_TRUE(none.gbps);
  EXPECT_FALSE(ceilings_for(R"({"bf16_tflops":"fast"})", DType::kBF16).tflops);
  EXPECT_DOUBLE_EQ(*ceilings_for(R"({"fp8_tflops":1900})", DType::kFP8E4M3).tflops, 1900.0);
}

}  // namespace
}  // namespace ktune::reports
