// The worker requests `ktune bench` builds, compiled by NVRTC for sm_90 without a GPU (label nvrtc):
// every kernel's default config, a tensor-core config and a split-K config (two launches timed as
// one run), with and without verification.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/bench_request.hpp"
#include "cli/bench_target.hpp"
#include "ktune/error.hpp"

namespace ktune::testing {
namespace {

bool has_buffer(const measure::CandidateRequest& r, const std::string& name) {
  return std::any_of(r.buffers.begin(), r.buffers.end(), [&](const auto& b) { return b.name == name; });
}

class BenchRequest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    try {
      compiler_ = std::make_unique<harness::NvrtcCompiler>();
    } catch (const Error& e) {
      skip_reason_ = e.what();
    }
  }
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << "needs NVRTC: " << skip_reason_;
  }
  /// The request, or nullopt (with nvrtc_missing_ set) when NVRTC cannot be opened.
  std::optional<measure::CandidateRequest> build(const cli::BenchTarget& t, const cli::BenchConfig& c,
                                                 bool verify) {
    try {
      return cli::make_bench_request(t, c, "sm_90", timing_, 0, verify, *compiler_, sources_);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kNoDevice) throw;
      nvrtc_missing_ = e.what();
      return std::nullopt;
    }
  }
  std::string nvrtc_missing_;
  static inline std::unique_ptr<harness::NvrtcCompiler> compiler_;
  static inline std::string skip_reason_;
  kernel_templates::SourceLibrary sources_ = kernel_templates::SourceLibrary::builtin();
  measure::TimingOptions timing_;
};

TEST_F(BenchRequest, DefaultConfigOfEveryKernelIsOneVerifiedRequest) {
  timing_.max_samples = 77;  // reaches the request
  const std::vector<std::array<std::string, 4>> cases = {
      {"gemm", "m=128,n=256,k=512", "bf16", ""},
      {"gemm", "m=16,n=1024,k=1024", "f16", "nn"},
      {"rmsnorm", "rows=16,hidden=4096", "bf16", ""},
      {"softmax", "rows=32,cols=1000", "f32", ""},
      {"swiglu", "m=16,i=11008", "bf16", ""},
      {"rmsnorm_rope", "tokens=16,heads_q=32,heads_kv=8,head_dim=128", "bf16", ""}};
  for (const auto& [kernel, shape, dtype, layout] : cases) {
    SCOPED_TRACE(kernel + " " + shape + " " + dtype + " " + layout);
    const auto t = cli::parse_bench_target(kernel, shape, dtype, layout);
    const auto c = cli::default_bench_config(t);
    const auto built = build(t, c, true);
    if (!built) GTEST_SKIP() << "needs NVRTC: " << nvrtc_missing_;
    const measure::CandidateRequest& r = *built;
    EXPECT_EQ(r.name, c.name);
    ASSERT_FALSE(r.launches.empty());
    for (const auto& l : r.launches) {
      EXPECT_FALSE(l.cubin.empty());
      EXPECT_FALSE(l.function.empty());
    }
    EXPECT_TRUE(r.reference.has_value());
    EXPECT_FALSE(r.checks.empty());
    for (const auto& check : r.checks) {
      EXPECT_TRUE(has_buffer(r, check.output)) << check.output;
      EXPECT_TRUE(has_buffer(r, check.reference)) << check.reference;
    }
    EXPECT_DOUBLE_EQ(r.flops, c.spec->work(t.problem).flops);
    EXPECT_DOUBLE_EQ(r.bytes_moved, c.spec->work(t.problem).min_bytes);
    EXPECT_EQ(r.timing.max_samples, 77);

    const auto unverified = build(t, c, false);
    ASSERT_TRUE(unverified.has_value());
    EXPECT_TRUE(unverified->checks.empty());
    EXPECT_FALSE(unverified->reference.has_value());
  }
}

TEST_F(BenchRequest, TensorCoreSplitKIsOneSequenceOfLaunches) {
  const auto t = cli::parse_bench_target("gemm", "m=16,n=1024,k=4096", "bf16", "nt");
  const auto c = cli::parse_bench_config(t, R"({"template":"mma","SPLIT_K":4,"SPLIT_K_MODE":0})");
  const auto built = build(t, c, true);
  if (!built) GTEST_SKIP() << "needs NVRTC: " << nvrtc_missing_;
  const measure::CandidateRequest& r = *built;
  EXPECT_GE(r.launches.size(), 2u) << "the GEMM and the reduction";
  EXPECT_TRUE(has_buffer(r, "workspace"));
  EXPECT_NE(r.name.find("sk4"), std::string::npos) << r.name;
}

}  // namespace
}  // namespace ktune::testing
