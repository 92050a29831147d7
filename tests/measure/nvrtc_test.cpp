// The harness's device code compiles with NVRTC (no GPU needed): random fill and compare for every
// dtype, and the built-in copy kernel for every unroll.
#include <gtest/gtest.h>

#include "harness/nvrtc_compiler.hpp"
#include "ktune/error.hpp"
#include "measure/copy_kernel.hpp"
#include "measure/utility_kernels.hpp"

namespace ktune::measure {
namespace {

TEST(MeasureNvrtc, UtilityKernelsCompileForEveryDtype) {
  for (const char* arch : {"sm_80", "sm_90"}) {
    harness::CompileRequest req;
    req.source = utility_kernels_source();
    req.arch = arch;
    for (DType d : {DType::kF32, DType::kF16, DType::kBF16, DType::kFP8E4M3, DType::kFP8E5M2}) {
      req.name_expressions.push_back(fill_name_expression(d));
      req.name_expressions.push_back(compare_name_expression(d));
    }
    harness::NvrtcCompiler compiler;
    const harness::CompileResult res = compiler.compile(req);
    EXPECT_GT(res.cubin.size(), 1000U) << arch;
    EXPECT_EQ(res.lowered_names.size(), 10U);
    for (const auto& [expr, lowered] : res.lowered_names) EXPECT_FALSE(lowered.empty()) << expr;
  }
}

TEST(MeasureNvrtc, UserKernelFillsAndIntegerComparesCompile) {
  harness::CompileRequest req;
  req.source = utility_kernels_source();
  req.arch = "sm_90";
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16, DType::kFP8E4M3, DType::kFP8E5M2}) {
    req.name_expressions.push_back(fill_name_expression(d, BufferFill::Kind::kRange));
    req.name_expressions.push_back(fill_name_expression(d, BufferFill::Kind::kPattern));
  }
  for (IntType t : {IntType::kI32, IntType::kI64, IntType::kU8}) {
    for (auto kind : {BufferFill::Kind::kRange, BufferFill::Kind::kPattern, BufferFill::Kind::kSequence})
      req.name_expressions.push_back(fill_name_expression(t, kind));
    req.name_expressions.push_back(compare_name_expression(t));
  }
  harness::NvrtcCompiler compiler;
  const harness::CompileResult res = compiler.compile(req);
  EXPECT_EQ(res.lowered_names.size(), 22U);
  for (const auto& [expr, lowered] : res.lowered_names) EXPECT_FALSE(lowered.empty()) << expr;
  EXPECT_EQ(fill_name_expression(IntType::kI64, BufferFill::Kind::kSequence),
            "ktune_fill_int_sequence<long long>");
  // No sequence of floats, no random integers.
  EXPECT_THROW(fill_name_expression(DType::kF32, BufferFill::Kind::kSequence), Error);
  EXPECT_THROW(fill_name_expression(IntType::kI32, BufferFill::Kind::kRandom), Error);
}

TEST(MeasureNvrtc, CopyKernelCompilesForEveryUnrollWithAndWithoutStreaming) {
  harness::CompileRequest req;
  req.source = copy_kernel_source();
  req.arch = "sm_90";
  for (int u : {1, 2, 4, 8}) {
    for (bool streaming : {false, true}) {
      CopyConfig c;
      c.unroll = u;
      c.streaming = streaming;
      req.name_expressions.push_back(copy_name_expression(c));
    }
  }
  EXPECT_EQ(req.name_expressions[1], "ktune_copy<1,true>");
  harness::NvrtcCompiler compiler;
  const harness::CompileResult res = compiler.compile(req);
  ASSERT_EQ(res.lowered_names.size(), 8U);
  // No spills: the copy keeps UNROLL uint4 in registers.
  for (const auto& [lowered, r] : res.resources) EXPECT_EQ(r.spill_store_bytes, 0) << lowered;
}

TEST(MeasureNvrtc, CopyRequestChecksAlignmentAndConfig) {
  EXPECT_THROW(make_copy_request(3, DType::kF32, CopyConfig{}, "sm_90", TimingOptions{}), Error);  // 12 bytes
  EXPECT_THROW(CopyConfig::from_json(nlohmann::json{{"unroll", 3}}), Error);
  EXPECT_THROW(CopyConfig::from_json(nlohmann::json{{"blocks", 256}}), Error);
  EXPECT_THROW(CopyConfig::from_json(nlohmann::json{{"streaming", 2}}), Error);
  const CopyConfig cs = CopyConfig::from_json({{"unroll", 8}, {"streaming", 1}, {"grid", 528}});
  EXPECT_EQ(cs.name(DType::kF32), "copy.f32.u8.b256.g528.cs");
  EXPECT_EQ(CopyConfig::from_json(cs.to_json()).name(DType::kF32), cs.name(DType::kF32));
  const CandidateRequest r = make_copy_request(1 << 20, DType::kBF16, CopyConfig::from_json({{"unroll", 8}}),
                                               "sm_90", TimingOptions{});
  EXPECT_EQ(r.name, "copy.bf16.u8.b256");
  EXPECT_EQ(r.bytes_moved, 2.0 * 2 * (1 << 20));
  EXPECT_EQ(r.launches.at(0).grid[0], (1U << 20) * 2 / 16 / (256 * 8));
  EXPECT_FALSE(r.launches.at(0).cubin.empty());
  ASSERT_EQ(r.checks.size(), 1U);
  EXPECT_EQ(r.checks[0].output, "dst");
}

}  // namespace
}  // namespace ktune::measure
