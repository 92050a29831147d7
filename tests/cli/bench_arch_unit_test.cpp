// `ktune bench` refuses a config whose template the GPU's arch lacks (exit 2, the template's
// reason), before compiling it: wgmma needs sm_90/sm_90a, fp8_gemm sm_89 or newer.

#include <gtest/gtest.h>

#include <string>

#include "cli/bench_target.hpp"
#include "kernel_templates/fp8_gemm/fp8_gemm_spec.hpp"
#include "kernel_templates/gemm/gemm_wgmma_spec.hpp"
#include "ktune/error.hpp"

namespace ktune::cli {
namespace {

/// The message of the ktune::Error(kBadInput) `fn` throws; "" when it throws nothing.
template <class Fn>
std::string bad_input(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput) << e.what();
    return e.what();
  }
  return "";
}

TEST(BenchArch, WgmmaConfigIsRefusedOffHopperWithTheReason) {
  const BenchTarget t = parse_bench_target("gemm", "m=384,n=1536,k=768", "bf16", "");
  const BenchConfig c =
      parse_bench_config(t, R"({"template":"wgmma","params":{"BLOCK_M":128,"BLOCK_N":128,"BLOCK_K":64,)"
                            R"("STAGES":4,"SPLIT_K":1,"SWIZZLE":8}})");
  const std::string msg = bad_input([&] { require_bench_arch(c, "sm_80", "NVIDIA A100-SXM4-80GB"); });
  EXPECT_NE(msg.find(c.name), std::string::npos) << msg;
  EXPECT_NE(msg.find("NVIDIA A100-SXM4-80GB"), std::string::npos) << msg;
  EXPECT_NE(msg.find(*kernel_templates::WgmmaGemmSpec::rejection_for_arch("sm_80")), std::string::npos)
      << msg;
  EXPECT_EQ(bad_input([&] { require_bench_arch(c, "sm_90", "NVIDIA H200"); }), "");
  // Another template of the same kernel runs anywhere.
  const BenchConfig d = default_bench_config(parse_bench_target("gemm", "m=7,n=96,k=160", "f16", "nn"));
  EXPECT_EQ(bad_input([&] { require_bench_arch(d, "sm_80", "A100"); }), "");
}

TEST(BenchArch, Fp8GemmIsRefusedBeforeAda) {
  const BenchTarget t = parse_bench_target("fp8_gemm", "m=48,n=320,k=704", "fp8e4m3", "nt+rowcol");
  const BenchConfig c = default_bench_config(t);
  const std::string msg = bad_input([&] { require_bench_arch(c, "sm_86", "NVIDIA A10"); });
  EXPECT_NE(msg.find(*kernel_templates::Fp8GemmSpec::rejection_for_arch("sm_86")), std::string::npos) << msg;
  EXPECT_EQ(bad_input([&] { require_bench_arch(c, "sm_89", "NVIDIA L40S"); }), "");
}

}  // namespace
}  // namespace ktune::cli
