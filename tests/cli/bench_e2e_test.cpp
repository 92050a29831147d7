// `ktune bench` end to end without a GPU: --help, bad input (exit 2, naming the bad part, reported
// before a missing GPU), no GPU (exit 3, nothing on stdout). On a machine with a GPU the no-GPU
// cases skip; the gpu suite (bench_gpu_test.cpp) covers the timed paths.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/device_info.hpp"
#include "ktune/error.hpp"
#include "tests/cli/ktune_runner.hpp"

namespace ktune::testing {
namespace {

bool has_device() {
  try {
    return harness::device_count() > 0;
  } catch (const Error&) {
    return false;
  }
}

std::vector<std::string> bench(std::vector<std::string> extra) {
  std::vector<std::string> args{"bench"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

const std::vector<std::string> kGemm = {"--kernel",          "gemm",    "--shape",
                                        "m=128,n=256,k=512", "--dtype", "bf16"};

std::vector<std::string> gemm_with(std::vector<std::string> extra) {
  auto args = bench(kGemm);
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(BenchCommand, HelpListsTheOptions) {
  const auto r = run_ktune({"bench", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* want :
       {"--kernel", "--shape", "--dtype", "--layout", "--config", "--best", "--baseline", "cublas",
        "--no-verify", "--db", "--format", "gbench", "--json", "--rse-target", "Exit codes"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
}

struct BadCase {
  std::vector<std::string> args;
  std::string names;  ///< what the message must name
};

class BenchBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BenchBadInput, Exits2NamingTheBadPartWithOrWithoutAGpu) {
  const auto r = run_ktune(GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(GetParam().names), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BenchBadInput,
    ::testing::Values(
        BadCase{bench({"--kernel", "gemmx", "--shape", "m=1,n=1,k=1", "--dtype", "bf16"}), "gemmx"},
        BadCase{bench({"--kernel", "gemm", "--shape", "m=1,n=1", "--dtype", "bf16"}),
                "missing dimension 'k'"},
        BadCase{bench({"--kernel", "gemm", "--shape", "m=-4,n=1,k=1", "--dtype", "bf16"}), "m=-4"},
        BadCase{bench({"--kernel", "gemm", "--shape", "m=1,n=1,k=1", "--dtype", "f8"}), "f8"},
        BadCase{bench({"--kernel", "gemm", "--shape", "m=1,n=1,k=1", "--dtype", "bf16", "--layout", "tt"}),
                "tt"},
        BadCase{gemm_with({"--config", "{\"template\":"}), "not JSON"},
        BadCase{gemm_with({"--config", R"({"template":"nosuch"})"}), "nosuch"},
        BadCase{gemm_with({"--config", R"({"template":"tiled","BLOCK_Z":64})"}), "BLOCK_Z"},
        BadCase{gemm_with({"--config", R"({"template":"tiled","STAGES":1})"}), "STAGES"},
        BadCase{gemm_with({"--config", R"({"template":"tiled"})", "--best"}), "--best"},
        BadCase{gemm_with({"--baseline", "mkl"}), "mkl"},
        BadCase{gemm_with({"--baseline", "cublas", "--layout", "nt+bias+silu"}), "no cuBLAS baseline"},
        BadCase{bench({"--kernel", "rmsnorm", "--shape", "rows=16,hidden=4096", "--dtype", "bf16",
                       "--baseline", "cublas"}),
                "no cuBLAS baseline for kernel rmsnorm"},
        BadCase{bench({"--kernel", "copy", "--shape", "n=3", "--dtype", "f32"}), "16"},
        BadCase{bench({"--kernel", "copy", "--shape", "n=1024", "--config", R"({"unroll":3})"}), "unroll"}));

TEST(BenchCommand, NoGpuExits3AfterTheInputIsChecked) {
  if (has_device()) GTEST_SKIP() << "a GPU is present: the timed paths are covered by ktune_bench_gpu_tests";
  for (const auto& args : {gemm_with({}), gemm_with({"--baseline", "cublas", "--json"}),
                           gemm_with({"--best", "--db", "/nonexistent/x.db"}),
                           bench({"--kernel", "softmax", "--shape", "rows=4,cols=1000", "--dtype", "f16",
                                  "--baseline", "default"}),
                           bench({"--kernel", "copy", "--shape", "n=1048576"})}) {
    const auto r = run_ktune(args);
    std::string line;
    for (const auto& a : args) line += a + " ";
    EXPECT_EQ(r.exit_code, 3) << line << "\n" << r.err;
    EXPECT_NE(r.err.find("ktune: error:"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace
}  // namespace ktune::testing
