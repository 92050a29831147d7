// gpu: the tensor-core template (gemm_mma.cu) against the f32 GPU reference on random data: every
// sampled config, f16 and bf16, both layouts, odd shapes (no tile divides M, N or K; K % 8 != 0 takes
// the element path; K not divisible by SPLIT_K * BLOCK_K) and round ones; epilogues (bias, SiLU)
// with and without split-K; the epilogue reference against the CPU float64 one (D4); deterministic
// split-K bit-identical over runs; misaligned pointers; the cuBLASLt baseline against the reference;
// the SASS holds HMMA, LDSM and LDGSTS. The cluster split-K template (gemm_mma_cluster.cu) over its
// samples, epilogues, bit-identical runs and misaligned pointers; skipped with the reason before
// sm_90. Skips with the reason when there is no GPU.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include <unistd.h>

#include "gemm_gpu_fixture.hpp"
#include "gemm_mma_samples.hpp"
#include "gemm_samples.hpp"
#include "gpu_plan_runner.hpp"
#include "harness/context.hpp"
#include "harness/cublaslt_gemm.hpp"
#include "harness/device_info.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "measure/tolerance.hpp"
#include "measure/verification.hpp"

namespace ktune::kernel_templates {
namespace {

using testing::DeviceTensors;
using testing::gemm_problem;
using testing::KernelCache;

testing::GpuSession& gpu() { return testing::gpu_session(); }

const KernelSpec& mma() { return find_spec("gemm", "mma"); }
/// The template a config names: "mma" or "mma_cluster".
const KernelSpec& spec_of(const Config& config) { return find_spec("gemm", config.variant); }

class MmaGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu().context) GTEST_SKIP() << gpu().skip_reason;
    gpu().context->make_current();
  }
};

using Fixture = testing::GemmFixture;

/// Random inputs (misaligned by one element when `misalign`) and the GPU reference output.
std::unique_ptr<Fixture> make_fixture(const Problem& problem, uint64_t seed, bool misalign = false) {
  return testing::make_random_fixture(mma(), *gpu().kernels, problem, seed, misalign);
}

std::vector<uint8_t> run_candidate(Fixture& f, const Config& config) {
  return testing::run_candidate(spec_of(config), *gpu().kernels, f, config);
}

void expect_matches(Fixture& f, const std::vector<uint8_t>& bytes, const std::string& label) {
  const auto out = ktune::decode(f.problem.dtype, std::as_bytes(std::span(bytes)));
  const measure::Verdict v =
      measure::judge(measure::compare(out, f.c_ref), measure::tolerance_for(f.problem.dtype));
  EXPECT_TRUE(v.ok) << label << ": " << v.reason;
}

void expect_config_matches(Fixture& f, const Config& config) {
  const KernelSpec& spec = spec_of(config);
  const std::string label = spec.canonical_name(f.problem, config) + " @ " + f.problem.shape_text();
  if (auto why = spec.rejection(f.problem, config)) {
    ADD_FAILURE() << label << " rejected: " << *why;
    return;
  }
  try {
    expect_matches(f, run_candidate(f, config), label);
  } catch (const Error& e) {
    ADD_FAILURE() << label << ": " << e.what() << "\n" << e.detail();
  }
}

void prefetch(const Problem& p, const std::vector<Config>& configs) {
  for (const auto& c : configs) {
    if (!spec_of(c).rejection(p, c)) gpu().kernels->prefetch(spec_of(c).compile_spec(p, c));
  }
  gpu().kernels->prefetch(mma().reference(p).compile);
}

// Odd (K % 8 != 0: element path), odd with K % 8 == 0 (cp.async path with M, N edges and 520 =
// 16 * 32 + 8 divisible by no SPLIT_K * BLOCK_K of the sample), decode-like, and round.
constexpr int64_t kShapes[][3] = {{77, 93, 331}, {133, 200, 520}, {3, 264, 4096}, {256, 512, 256}};

/// Every config of `configs` against the reference on kShapes, both dtypes and layouts (inputs of
/// `seed`).
void expect_samples_match(const std::vector<Config>& configs, uint64_t seed) {
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (const char* layout : {"nt", "nn"}) {
      for (const auto& s : kShapes) prefetch(gemm_problem(s[0], s[1], s[2], dtype, layout), configs);
    }
  }
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (const char* layout : {"nt", "nn"}) {
      for (const auto& s : kShapes) {
        auto f = make_fixture(gemm_problem(s[0], s[1], s[2], dtype, layout), seed);
        for (const Config& c : configs) expect_config_matches(*f, c);
      }
    }
  }
}

TEST_F(MmaGpu, SampleMatchesReference) { expect_samples_match(testing::mma_samples(), 17); }

TEST_F(MmaGpu, EpilogueReferenceMatchesCpuFloat64) {
  const int64_t shapes[][3] = {{37, 29, 53}, {1, 65, 130}, {16, 16, 16}};
  for (const char* layout : {"nt+bias+silu", "nn+bias", "nt+silu"}) {
    for (const auto& s : shapes) {
      const Problem p = gemm_problem(s[0], s[1], s[2], DType::kBF16, layout);
      auto f = make_fixture(p, 700 + static_cast<uint64_t>(s[2]));
      const HostTensors cpu = mma().cpu_reference(p, f->host);
      const measure::ErrorMetrics m = measure::compare(f->c_ref, cpu.at("c"));
      // f32 accumulation of exactly representable products, then f32 expf: 1e-5 is 10x under the
      // f32 tolerance.
      EXPECT_LT(m.rel_err, 1e-5) << p.shape_text() << " " << layout;
      EXPECT_EQ(m.count, static_cast<uint64_t>(s[0] * s[1]));
    }
  }
}

TEST_F(MmaGpu, EpiloguesMatchReference) {
  const auto s = testing::mma_samples();
  // No split, deterministic split-K (finishing pass), atomic split-K (zero, atomics, conversion).
  const std::vector<Config> configs = {s[0], s[3], s[4], s[5]};
  const char* layouts[] = {"nt+bias+silu", "nn+bias", "nt+silu", "nn+bias+silu"};
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (const char* layout : layouts) prefetch(gemm_problem(133, 200, 520, dtype, layout), configs);
  }
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (const char* layout : layouts) {
      for (const int64_t k : {520, 331}) {
        auto f = make_fixture(gemm_problem(133, 200, k, dtype, layout), 31);
        for (const Config& c : configs) expect_config_matches(*f, c);
      }
    }
  }
}

TEST_F(MmaGpu, DeterministicSplitKIsBitIdenticalOverRuns) {
  const auto s = testing::mma_samples();
  for (const auto& [config, problem] : std::vector<std::pair<Config, Problem>>{
           {s[3], gemm_problem(77, 93, 4104, DType::kBF16, "nt")},
           {s[5], gemm_problem(33, 300, 2000, DType::kF16, "nn+bias+silu")}}) {
    ASSERT_GT(config.at("SPLIT_K"), 1);
    ASSERT_EQ(config.at("SPLIT_K_MODE"), 0);
    auto f = make_fixture(problem, 53);
    const auto first = run_candidate(*f, config);
    expect_matches(*f, first, mma().canonical_name(problem, config));
    for (int run = 0; run < 3; ++run) {
      EXPECT_EQ(run_candidate(*f, config), first) << mma().canonical_name(problem, config) << " run " << run;
    }
  }
}

TEST_F(MmaGpu, MisalignedPointersTakeTheElementPath) {
  // A and B one element past 16-byte alignment, K a multiple of 8: only the pointer check can send
  // the kernel to its element path (AlignmentRule::required is false).
  for (const char* layout : {"nt", "nn"}) {
    auto f = make_fixture(gemm_problem(65, 136, 1024, DType::kBF16, layout), 41, /*misalign=*/true);
    ASSERT_NE(f->tensors.ptr("a") % 16, 0u);
    expect_config_matches(*f, testing::mma_samples()[0]);
    expect_config_matches(*f, testing::mma_samples()[4]);
  }
}

TEST_F(MmaGpu, CublasLtMatchesReference) {
  std::unique_ptr<harness::CublasLtGemm> blas;
  try {
    blas = std::make_unique<harness::CublasLtGemm>();
  } catch (const Error& e) {
    GTEST_SKIP() << "no cuBLASLt: " << e.what();
  }
  std::printf("%s\n", blas->version().c_str());
  const int64_t shapes[][3] = {{77, 93, 336}, {1, 4096, 4096}, {256, 512, 1024}, {1, 1152, 896}};
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    // The +bias forms through cuBLASLt's bias epilogue, against the epilogue reference.
    for (const char* layout : {"nt", "nn", "nt+bias", "nn+bias"}) {
      for (const auto& s : shapes) {
        auto f = make_fixture(gemm_problem(s[0], s[1], s[2], dtype, layout), 61);
        const TensorSpec c{"c", TensorRole::kOutput, dtype, s[0] * s[1]};
        f->tensors.ensure(c);
        f->tensors.poison("c");
        harness::CublasGemmProblem p{dtype, harness::library_layout_nt(layout), s[0], s[1], s[2]};
        p.bias = harness::library_layout_bias(layout);
        blas->run(p, f->tensors.ptr("a"), f->tensors.ptr("b"), f->tensors.ptr("c"), nullptr,
                  p.bias ? f->tensors.ptr("bias") : 0);
        gpu().context->synchronize();
        expect_matches(
            *f, f->tensors.download("c", static_cast<std::size_t>(c.bytes())),
            std::string("cublasLt ") + layout + " " + f->problem.shape_text() + " " + blas->algorithm(p));
      }
    }
  }
}

/// Why the cluster template cannot run on this device (before sm_90), or nullopt.
std::optional<std::string> cluster_skip() {
  return find_spec("gemm", "mma_cluster").arch_rejection(gpu().arch);
}

TEST_F(MmaGpu, ClusterSampleMatchesReference) {
  if (auto why = cluster_skip()) GTEST_SKIP() << *why;
  expect_samples_match(testing::mma_cluster_samples(), 19);
}

TEST_F(MmaGpu, ClusterEpiloguesMatchReference) {
  if (auto why = cluster_skip()) GTEST_SKIP() << *why;
  const auto configs = testing::mma_cluster_samples();
  const char* layouts[] = {"nt+bias+silu", "nn+bias", "nt+silu"};
  for (const char* layout : layouts) prefetch(gemm_problem(133, 200, 520, DType::kBF16, layout), configs);
  for (const char* layout : layouts) {
    for (const int64_t k : {520, 331}) {
      auto f = make_fixture(gemm_problem(133, 200, k, DType::kBF16, layout), 37);
      for (const Config& c : configs) expect_config_matches(*f, c);
    }
  }
}

TEST_F(MmaGpu, ClusterSplitKIsBitIdenticalOverRuns) {
  if (auto why = cluster_skip()) GTEST_SKIP() << *why;
  const KernelSpec& spec = find_spec("gemm", "mma_cluster");
  for (const Config& config : testing::mma_cluster_samples()) {
    const Problem problem = gemm_problem(40, 1000, 4104, DType::kBF16, "nt");
    auto f = make_fixture(problem, 59);
    const auto first = run_candidate(*f, config);
    expect_matches(*f, first, spec.canonical_name(problem, config));
    for (int run = 0; run < 3; ++run) {
      EXPECT_EQ(run_candidate(*f, config), first) << spec.canonical_name(problem, config) << " run " << run;
    }
  }
}

TEST_F(MmaGpu, ClusterMisalignedPointersTakeTheElementPath) {
  if (auto why = cluster_skip()) GTEST_SKIP() << *why;
  for (const char* layout : {"nt", "nn"}) {
    auto f = make_fixture(gemm_problem(65, 136, 1024, DType::kBF16, layout), 43, /*misalign=*/true);
    ASSERT_NE(f->tensors.ptr("a") % 16, 0u);
    for (const Config& c : testing::mma_cluster_samples()) expect_config_matches(*f, c);
  }
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

TEST(MmaSass, MainConfigUsesTensorCoresLdmatrixAndCpAsync) {
  const std::string cuobjdump = find_cuobjdump();
  if (cuobjdump.empty()) GTEST_SKIP() << "no cuobjdump in $CUDA_HOME/bin or /usr/local/cuda/bin";
  const std::string arch = gpu().context ? gpu().arch : "sm_90";
  for (const char* layout : {"nt", "nn"}) {
    const Problem p = gemm_problem(4096, 4096, 4096, DType::kBF16, layout);
    const CompileSpec spec = mma().compile_spec(p, testing::mma_main_samples()[0]);
    harness::NvrtcCompiler compiler;
    const auto result = compiler.compile(make_compile_request(spec, SourceLibrary::builtin(), arch));
    const auto dir = std::filesystem::temp_directory_path() / ("ktune_sass_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto cubin = dir / "mma.cubin";
    std::ofstream(cubin, std::ios::binary) << result.cubin;
    const std::string cmd = cuobjdump + " -sass " + cubin.string() + " > " + (dir / "mma.sass").string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream in(dir / "mma.sass");
    const std::string sass((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove_all(dir);
    for (const char* op : {"HMMA.16816.F32.BF16", "LDSM.16.M88.4", "LDGSTS"}) {
      EXPECT_NE(sass.find(op), std::string::npos) << layout << ": no " << op << " in the SASS of " << arch;
    }
    if (std::string(layout) == "nn") {
      EXPECT_NE(sass.find("LDSM.16.MT88.4"), std::string::npos) << "no ldmatrix.trans";
    }
  }
}

}  // namespace
}  // namespace ktune::kernel_templates
