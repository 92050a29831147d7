// gpu: the wgmma template (gemm_wgmma.cu, sm_90a) against the f32 GPU reference on random data:
// every sampled config, f16 and bf16, both layouts, odd shapes (no tile divides M, N or K; K % 8 != 0
// takes the element path), shapes with many k tiles and blocks, round ones; epilogues (bias, SiLU);
// misaligned pointers; split-K (matches, and is bit-identical across runs); the SASS holds HGMMA
// and LDGSTS. Skips with the reason when there is no GPU
// or the GPU is not sm_90.

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include <unistd.h>

#include "gemm_gpu_fixture.hpp"
#include "gemm_samples.hpp"
#include "gemm_wgmma_samples.hpp"
#include "gpu_plan_runner.hpp"
#include "harness/context.hpp"
#include "harness/device_info.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/gemm/gemm_wgmma_spec.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "measure/tolerance.hpp"
#include "measure/verification.hpp"

namespace ktune::kernel_templates {
namespace {

using testing::DeviceTensors;
using testing::gemm_problem;
using testing::KernelCache;

testing::GpuSession& gpu() { return testing::gpu_session(WgmmaGemmSpec::rejection_for_arch); }

const KernelSpec& wgmma() { return find_spec("gemm", "wgmma"); }

class WgmmaGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu().context) GTEST_SKIP() << gpu().skip_reason;
    gpu().context->make_current();
  }
};

using Fixture = testing::GemmFixture;

/// Random inputs (misaligned by one element when `misalign`) and the GPU reference output.
std::unique_ptr<Fixture> make_fixture(const Problem& problem, uint64_t seed, bool misalign = false) {
  return testing::make_random_fixture(wgmma(), *gpu().kernels, problem, seed, misalign);
}

std::vector<uint8_t> run_candidate(Fixture& f, const Config& config) {
  return testing::run_candidate(wgmma(), *gpu().kernels, f, config);
}

void expect_config_matches(Fixture& f, const Config& config) {
  const std::string label = wgmma().canonical_name(f.problem, config) + " @ " + f.problem.shape_text();
  if (auto why = wgmma().rejection(f.problem, config)) {
    ADD_FAILURE() << label << " rejected: " << *why;
    return;
  }
  try {
    const auto bytes = run_candidate(f, config);
    const auto out = ktune::decode(f.problem.dtype, std::as_bytes(std::span(bytes)));
    const measure::Verdict v =
        measure::judge(measure::compare(out, f.c_ref), measure::tolerance_for(f.problem.dtype));
    EXPECT_TRUE(v.ok) << label << ": " << v.reason;
  } catch (const Error& e) {
    ADD_FAILURE() << label << ": " << e.what() << "\n" << e.detail();
  }
}

void prefetch(const Problem& p, const std::vector<Config>& configs) {
  for (const auto& c : configs) {
    if (!wgmma().rejection(p, c)) gpu().kernels->prefetch(wgmma().compile_spec(p, c));
  }
  gpu().kernels->prefetch(wgmma().reference(p).compile);
}

// Odd with K % 8 != 0 (element path), odd with K % 8 == 0 (cp.async with M, N, K edges), many k
// tiles and blocks (grouped order over several block-rows), round.
constexpr int64_t kShapes[][3] = {{77, 93, 331}, {133, 200, 520}, {1000, 1032, 2056}, {256, 512, 256}};

TEST_F(WgmmaGpu, SampleMatchesReference) {
  const auto configs = testing::wgmma_samples();
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (const char* layout : {"nt", "nn"}) {
      for (const auto& s : kShapes) prefetch(gemm_problem(s[0], s[1], s[2], dtype, layout), configs);
    }
  }
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (const char* layout : {"nt", "nn"}) {
      for (const auto& s : kShapes) {
        auto f = make_fixture(gemm_problem(s[0], s[1], s[2], dtype, layout), 17);
        for (const Config& c : configs) expect_config_matches(*f, c);
      }
    }
  }
}

TEST_F(WgmmaGpu, EpiloguesMatchReference) {
  const auto s = testing::wgmma_samples();
  const std::vector<Config> configs = {s[0], s[3]};
  const char* layouts[] = {"nt+bias+silu", "nn+bias", "nt+silu"};
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (const char* layout : layouts) prefetch(gemm_problem(133, 200, 520, dtype, layout), configs);
  }
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (const char* layout : layouts) {
      auto f = make_fixture(gemm_problem(133, 200, 520, dtype, layout), 31);
      for (const Config& c : configs) expect_config_matches(*f, c);
    }
  }
}

TEST_F(WgmmaGpu, MisalignedPointersTakeTheElementPath) {
  for (const char* layout : {"nt", "nn"}) {
    auto f = make_fixture(gemm_problem(65, 136, 1024, DType::kBF16, layout), 41, /*misalign=*/true);
    ASSERT_NE(f->tensors.ptr("a") % 16, 0u);
    expect_config_matches(*f, testing::wgmma_samples()[0]);
    expect_config_matches(*f, testing::wgmma_samples()[3]);
  }
}

TEST_F(WgmmaGpu, SplitKIsBitIdenticalAcrossRuns) {
  // The splits are summed in a fixed order: two runs give the same bytes.
  for (const char* layout : {"nt", "nn+bias"}) {
    auto f = make_fixture(gemm_problem(300, 520, 2056, DType::kBF16, layout), 53);
    const Config c = testing::wgmma_config(128, 128, 4, 8, 5);
    expect_config_matches(*f, c);
    const auto first = run_candidate(*f, c);
    const auto second = run_candidate(*f, c);
    EXPECT_EQ(first, second) << layout;
  }
}

TEST_F(WgmmaGpu, TmaVariantMatchesReference) {
  // wgmma_tma: TMA loads through tensor maps encoded when the arguments are bound; "nt", K % 8 == 0;
  // M, N and K edges (zero-filled boxes), several k tiles per split, epilogues, split-K.
  const KernelSpec& tma = find_spec("gemm", "wgmma_tma");
  auto cfg = [](int64_t bm, int64_t bn, int64_t stages, int64_t swizzle, int64_t split) {
    Config c = testing::wgmma_config(bm, bn, stages, swizzle, split);
    c.variant = "wgmma_tma";
    return c;
  };
  const std::vector<Config> configs = {cfg(128, 256, 4, 8, 1), cfg(128, 128, 5, 8, 1), cfg(64, 128, 6, 8, 1),
                                       cfg(64, 64, 3, 1, 1), cfg(128, 128, 4, 8, 3)};
  for (const char* layout : {"nt", "nt+bias+silu"}) {
    for (const auto& s : {std::array<int64_t, 3>{133, 200, 520}, std::array<int64_t, 3>{1000, 1032, 2056},
                          std::array<int64_t, 3>{256, 512, 256}}) {
      for (DType dtype : {DType::kBF16, DType::kF16}) {
        const Problem p = gemm_problem(s[0], s[1], s[2], dtype, layout);
        auto f = testing::make_random_fixture(wgmma(), *gpu().kernels, p, 61, false);
        for (const Config& c : configs) {
          const std::string label = tma.canonical_name(p, c) + " @ " + p.shape_text();
          if (auto why = tma.rejection(p, c)) {
            ADD_FAILURE() << label << " rejected: " << *why;
            continue;
          }
          try {
            const auto bytes = testing::run_candidate(tma, *gpu().kernels, *f, c);
            const auto out = ktune::decode(p.dtype, std::as_bytes(std::span(bytes)));
            const measure::Verdict v =
                measure::judge(measure::compare(out, f->c_ref), measure::tolerance_for(p.dtype));
            EXPECT_TRUE(v.ok) << label << ": " << v.reason;
          } catch (const Error& e) {
            ADD_FAILURE() << label << ": " << e.what() << "\n" << e.detail();
          }
        }
      }
    }
  }
  EXPECT_NE(tma.rejection(gemm_problem(128, 128, 100, DType::kBF16, "nt"), configs[0]),
            std::nullopt);  // K % 8
  EXPECT_NE(tma.rejection(gemm_problem(128, 128, 128, DType::kBF16, "nn"), configs[0]), std::nullopt);
}

/// The cuobjdump of the toolkit, or "" when there is none.
std::string find_cuobjdump() {
  std::vector<std::filesystem::path> candidates;
  if (const char* home = std::getenv("CUDA_HOME"))
    candidates.emplace_back(std::filesystem::path(home) / "bin/cuobjdump");
  candidates.emplace_back("/usr/local/cuda/bin/cuobjdump");
  for (const auto& c : candidates) {
    if (std::filesystem::exists(c)) return c.string();
  }
  return {};
}

TEST(WgmmaSass, MainConfigUsesWarpgroupMmaAndCpAsync) {
  const std::string cuobjdump = find_cuobjdump();
  if (cuobjdump.empty()) GTEST_SKIP() << "no cuobjdump in $CUDA_HOME/bin or /usr/local/cuda/bin";
  for (const char* layout : {"nt", "nn"}) {
    const Problem p = gemm_problem(4096, 4096, 4096, DType::kBF16, layout);
    const CompileSpec spec = wgmma().compile_spec(p, testing::wgmma_main_samples()[0]);
    harness::NvrtcCompiler compiler;
    const auto result = compiler.compile(make_compile_request(spec, SourceLibrary::builtin(), "sm_90"));
    const auto dir =
        std::filesystem::temp_directory_path() / ("ktune_wgmma_sass_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto cubin = dir / "wgmma.cubin";
    std::ofstream(cubin, std::ios::binary) << result.cubin;
    const std::string cmd = cuobjdump + " -sass " + cubin.string() + " > " + (dir / "wgmma.sass").string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream in(dir / "wgmma.sass");
    const std::string sass((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove_all(dir);
    for (const char* op : {"HGMMA.64x256x16.F32.BF16", "LDGSTS", "WARPGROUP.ARRIVE"}) {
      EXPECT_NE(sass.find(op), std::string::npos) << layout << ": no " << op << " in the SASS";
    }
  }
}

}  // namespace
}  // namespace ktune::kernel_templates
