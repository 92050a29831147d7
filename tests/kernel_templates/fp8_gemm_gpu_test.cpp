// gpu: fp8_gemm against its f32 GPU reference on random e4m3 data: every sampled config, both scale
// modes (per-tensor, per-row x per-column), odd shapes (no tile divides M or N; K % 32 == 16 leaves
// half an MMA slice; K not divisible by SPLIT_K * BLOCK_K) and round and decode ones; the GPU
// reference against the CPU float64 one (D4); saturation to the largest finite bf16 (values past
// f32 range and values that round to inf in bf16), with and without split-K; split-K bit-identical
// over runs; the cuBLASLt fp8 baseline against the reference; the SASS of the main config (native
// fp8 MMAs on sm_89, f16 MMAs after conversions on sm_90). Skips with the reason when there is no
// GPU or it is older than sm_89.

#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>

#include "fp8_gemm_samples.hpp"
#include "gemm_gpu_fixture.hpp"
#include "gpu_plan_runner.hpp"
#include "harness/context.hpp"
#include "harness/cublaslt_fp8_gemm.hpp"
#include "harness/device_info.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/fp8_gemm/fp8_gemm_spec.hpp"
#include "kernel_templates/fp8_gemm/reference_fp8_gemm.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "measure/tolerance.hpp"
#include "measure/verification.hpp"

namespace ktune::kernel_templates {
namespace {

using testing::DeviceTensors;
using testing::fp8_config;
using testing::fp8_problem;
using testing::KernelCache;

testing::GpuSession& gpu() { return testing::gpu_session(Fp8GemmSpec::rejection_for_arch); }

const KernelSpec& fp8() { return find_spec("fp8_gemm", "mma"); }
/// The spec of a config's variant (mma or wgmma_tma).
const KernelSpec& spec_of(const Config& config) { return find_spec("fp8_gemm", config.variant); }

class Fp8Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu().context) GTEST_SKIP() << gpu().skip_reason;
    gpu().context->make_current();
  }
};

/// Random e4m3 bytes: random sign, exponent field 5..8, random mantissa: |v| in [0.25, 3.75], never
/// zero or NaN. `values` receives the decoded numbers.
std::vector<uint8_t> random_e4m3(int64_t count, uint64_t seed, std::vector<double>& values) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> bytes(static_cast<std::size_t>(count));
  values.resize(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const uint64_t r = rng();
    bytes[i] = static_cast<uint8_t>(((r & 1) << 7) | ((5 + ((r >> 1) & 3)) << 3) | ((r >> 3) & 7));
    values[i] = ktune::decode_fp8e4m3(bytes[i]);
  }
  return bytes;
}

std::vector<uint8_t> f32_bytes(const std::vector<double>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto f = static_cast<float>(v[i]);
    std::memcpy(out.data() + 4 * i, &f, 4);
  }
  return out;
}

using Fixture = testing::GemmFixture;

/// Random e4m3 inputs and f32 scales (+-[0.5, 1)), and the GPU reference output.
std::unique_ptr<Fixture> make_fixture(const Problem& problem, uint64_t seed) {
  auto f = std::make_unique<Fixture>();
  f->problem = problem;
  const bool rc = Fp8GemmSpec::rowcol(problem);
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  const int64_t k = problem.dim("k");
  std::map<std::string, std::vector<uint8_t>> bytes;
  bytes["a"] = random_e4m3(m * k, seed, f->host["a"]);
  bytes["b"] = random_e4m3(n * k, seed + 1, f->host["b"]);
  bytes["a_scale"] = testing::random_tensor(DType::kF32, rc ? m : 1, seed + 2, f->host["a_scale"]);
  bytes["b_scale"] = testing::random_tensor(DType::kF32, rc ? n : 1, seed + 3, f->host["b_scale"]);
  testing::run_reference(fp8(), *gpu().kernels, *f, bytes);
  return f;
}

std::vector<uint8_t> run_candidate(Fixture& f, const Config& config) {
  return testing::run_candidate(spec_of(config), *gpu().kernels, f, config);
}

void expect_matches(Fixture& f, const std::vector<uint8_t>& bytes, const std::string& label) {
  const auto out = ktune::decode(DType::kBF16, std::as_bytes(std::span(bytes)));
  const measure::Verdict v =
      measure::judge(measure::compare(out, f.c_ref), measure::tolerance_for(DType::kBF16));
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
  gpu().kernels->prefetch(fp8().reference(p).compile);
}

// Odd (K % 32 == 16: the last MMA slice is half zero-fill; M, N edges), odd with 528 = 2 * 256 + 16
// divisible by no SPLIT_K * BLOCK_K of the sample, decode-like, and round.
constexpr int64_t kShapes[][3] = {{77, 93, 336}, {133, 200, 528}, {3, 264, 4096}, {256, 512, 256}};

TEST_F(Fp8Gpu, SampleMatchesReference) {
  const auto configs = testing::fp8_samples();
  for (const char* layout : {"nt", "nt+rowcol"}) {
    for (const auto& s : kShapes) prefetch(fp8_problem(s[0], s[1], s[2], layout), configs);
  }
  for (const char* layout : {"nt", "nt+rowcol"}) {
    for (const auto& s : kShapes) {
      auto f = make_fixture(fp8_problem(s[0], s[1], s[2], layout), 17);
      for (const Config& c : configs) expect_config_matches(*f, c);
      expect_config_matches(*f, fp8().default_config(f->problem));
    }
  }
}

/// Why the wgmma variant cannot run on this GPU ("" when it can).
std::string wgmma_skip_reason() {
  return find_spec("fp8_gemm", "wgmma_tma").arch_rejection(gpu().arch).value_or("");
}

TEST_F(Fp8Gpu, WgmmaSampleMatchesReference) {
  if (const std::string why = wgmma_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto configs = testing::fp8_wgmma_samples();
  for (const char* layout : {"nt", "nt+rowcol"}) {
    for (const auto& s : kShapes) prefetch(fp8_problem(s[0], s[1], s[2], layout), configs);
  }
  for (const char* layout : {"nt", "nt+rowcol"}) {
    // The shapes above plus K = 4112 (32 k tiles and a 16-byte tail) over a tile grid of several
    // block-rows (grouped order).
    for (const auto& s : {std::array<int64_t, 3>{77, 93, 336}, std::array<int64_t, 3>{133, 200, 528},
                          std::array<int64_t, 3>{3, 264, 4096}, std::array<int64_t, 3>{256, 512, 256},
                          std::array<int64_t, 3>{300, 520, 4112}}) {
      auto f = make_fixture(fp8_problem(s[0], s[1], s[2], layout), 29);
      for (const Config& c : configs) expect_config_matches(*f, c);
    }
  }
}

TEST_F(Fp8Gpu, ReferenceMatchesCpuFloat64) {
  const int64_t shapes[][3] = {{37, 29, 64}, {1, 65, 128}, {16, 16, 16}, {20, 40, 1040}};
  for (const char* layout : {"nt", "nt+rowcol"}) {
    for (const auto& s : shapes) {
      const Problem p = fp8_problem(s[0], s[1], s[2], layout);
      auto f = make_fixture(p, 700 + static_cast<uint64_t>(s[2]));
      const HostTensors cpu = fp8().cpu_reference(p, f->host);
      const measure::ErrorMetrics m = measure::compare(f->c_ref, cpu.at("c"));
      // Products of e4m3 values are exact in f32; f32 accumulation of up to 1040 of them and two
      // scale roundings: 1e-5 is 10x under the f32 tolerance.
      EXPECT_LT(m.rel_err, 1e-5) << p.shape_text() << " " << layout;
      EXPECT_EQ(m.count, static_cast<uint64_t>(s[0] * s[1]));
    }
  }
}

/// Every output is +-(largest finite bf16): a all 448, b rows alternately +448 and -448, scales as
/// given, `k` products of 448 * 448 a sum.
void expect_saturates(const char* layout, int64_t m, int64_t n, int64_t k, double a_scale, double b_scale,
                      const Config& config) {
  auto f = std::make_unique<Fixture>();
  f->problem = fp8_problem(m, n, k, layout);
  const bool rc = Fp8GemmSpec::rowcol(f->problem);
  std::map<std::string, std::vector<uint8_t>> bytes;
  bytes["a"] = std::vector<uint8_t>(static_cast<std::size_t>(m * k), 0x7E);  // 448
  bytes["b"].resize(static_cast<std::size_t>(n * k));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t p = 0; p < k; ++p) bytes["b"][static_cast<std::size_t>(j * k + p)] = j % 2 ? 0xFE : 0x7E;
  }
  bytes["a_scale"] = f32_bytes(std::vector<double>(static_cast<std::size_t>(rc ? m : 1), a_scale));
  bytes["b_scale"] = f32_bytes(std::vector<double>(static_cast<std::size_t>(rc ? n : 1), b_scale));
  testing::run_reference(fp8(), *gpu().kernels, *f, bytes);
  const std::string label =
      spec_of(config).canonical_name(f->problem, config) + " @ " + f->problem.shape_text();
  const auto max = static_cast<double>(static_cast<float>(kBf16MaxFinite));
  for (std::size_t i = 0; i < f->c_ref.size(); ++i) {
    ASSERT_EQ(f->c_ref[i], (i % static_cast<std::size_t>(n)) % 2 ? -max : max)
        << "reference " << label << " " << i;
  }
  const auto raw = run_candidate(*f, config);
  for (std::size_t i = 0; i < raw.size() / 2; ++i) {
    const uint16_t bits = static_cast<uint16_t>(raw[2 * i] | (raw[2 * i + 1] << 8));
    ASSERT_EQ(bits, (i % static_cast<std::size_t>(n)) % 2 ? 0xFF7F : 0x7F7F) << label << " element " << i;
  }
}

TEST_F(Fp8Gpu, SaturatesToLargestFiniteBf16) {
  const Config plain = testing::fp8_main_samples()[2];
  const Config split = fp8_config(32, 128, 64, 1, 4, 4, 8, 1);
  // 32 * 448^2 = 6422528. Past f32 range (inf in f32 before the clamp): x 1e30 x 1e3.
  // Finite in f32, rounds to inf in bf16 (above (2 - 2^-8) 2^127 = 3.3962e38): 3.40e38.
  const double near = 3.40e38 / 6422528.0;
  std::vector<Config> configs = {plain, split};
  if (wgmma_skip_reason().empty()) configs.push_back(testing::fp8_wgmma_samples().front());
  for (const char* layout : {"nt", "nt+rowcol"}) {
    for (const Config& c : configs) {
      expect_saturates(layout, 37, 70, 32, 1e30, 1e3, c);
      expect_saturates(layout, 37, 70, 32, near, 1.0, c);
    }
  }
}

TEST_F(Fp8Gpu, SplitKIsBitIdenticalOverRuns) {
  const Config c = fp8_config(16, 64, 256, 1, 4, 3, 4, 1);
  auto f = make_fixture(fp8_problem(9, 300, 4112, "nt+rowcol"), 53);
  const auto first = run_candidate(*f, c);
  expect_matches(*f, first, fp8().canonical_name(f->problem, c));
  for (int run = 0; run < 3; ++run) EXPECT_EQ(run_candidate(*f, c), first) << "run " << run;
}

TEST_F(Fp8Gpu, CublasLtFp8MatchesReference) {
  std::unique_ptr<harness::CublasLtFp8Gemm> blas;
  try {
    blas = std::make_unique<harness::CublasLtFp8Gemm>();
  } catch (const Error& e) {
    GTEST_SKIP() << "no cuBLASLt: " << e.what();
  }
  const int64_t shapes[][3] = {{16, 4096, 4096}, {1, 6144, 4096}, {256, 512, 1024}, {80, 96, 336}};
  for (const auto& s : shapes) {
    auto f = make_fixture(fp8_problem(s[0], s[1], s[2]), 61);
    const TensorSpec c{"c", TensorRole::kOutput, DType::kBF16, s[0] * s[1]};
    f->tensors.ensure(c);
    f->tensors.poison("c");
    const harness::CublasFp8Problem p{s[0], s[1], s[2]};
    try {
      blas->run(p, f->tensors.ptr("a"), f->tensors.ptr("b"), f->tensors.ptr("a_scale"),
                f->tensors.ptr("b_scale"), f->tensors.ptr("c"), nullptr);
    } catch (const Error& e) {
      ADD_FAILURE() << "cuBLASLt fp8 " << f->problem.shape_text() << ": " << e.what();
      continue;
    }
    gpu().context->synchronize();
    std::printf("%s %s: %s\n", blas->version().c_str(), f->problem.shape_text().c_str(),
                blas->algorithm(p).c_str());
    expect_matches(*f, f->tensors.download("c", static_cast<std::size_t>(c.bytes())),
                   "cublasLt fp8 " + f->problem.shape_text());
  }
}

/// The SASS of the main config for `arch` (cuobjdump), "" when the toolkit has no cuobjdump.
std::string sass_of(const std::string& arch) {
  const char* home = std::getenv("CUDA_HOME");
  const std::filesystem::path tool =
      std::filesystem::path(home != nullptr ? home : "/usr/local/cuda") / "bin" / "cuobjdump";
  if (!std::filesystem::exists(tool)) return {};
  const CompileSpec spec = fp8().compile_spec(fp8_problem(4096, 4096, 4096), testing::fp8_main_samples()[0]);
  harness::NvrtcCompiler compiler;
  const auto result = compiler.compile(make_compile_request(spec, SourceLibrary::builtin(), arch));
  const auto dir = std::filesystem::temp_directory_path() / ("ktune_fp8_sass_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "k.cubin", std::ios::binary) << result.cubin;
  const std::string cmd =
      tool.string() + " -sass " + (dir / "k.cubin").string() + " > " + (dir / "k.sass").string();
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(dir / "k.sass");
  std::string sass((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove_all(dir);
  return sass;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Needs no GPU, only the toolkit's cuobjdump (absent from the CI image: it skips there).
TEST(Fp8Sass, TensorCoresLdmatrixAndCpAsync) {
  const std::string sm89 = sass_of("sm_89");
  if (sm89.empty()) GTEST_SKIP() << "no cuobjdump in $CUDA_HOME/bin or /usr/local/cuda/bin";
  const std::string sm90 = sass_of("sm_90");
  for (const auto* sass : {&sm89, &sm90}) {
    EXPECT_GT(count(*sass, "LDSM.16.M88.4"), 0u);
    EXPECT_GT(count(*sass, "LDGSTS"), 0u);
  }
  // 128x256x64 tile, 8 warps of 64x64: 4 x 8 tiles x 2 k32 slices = 64 fp8 MMAs a warp and k-tile
  // (sm_89), each two f16 k16 MMAs on sm_90 (128), after its e4m3 -> f16 conversions.
  std::printf("sm_89: %zu QMMA, %zu HMMA; sm_90: %zu HMMA.16816.F32, %zu F2FP\n", count(sm89, "QMMA"),
              count(sm89, "HMMA"), count(sm90, "HMMA.16816.F32"), count(sm90, "F2FP"));
  EXPECT_EQ(count(sm89, "HMMA"), 0u) << "sm_89 should run fp8 MMAs natively";
  EXPECT_GE(count(sm89, "QMMA.16832.F32.E4M3.E4M3"), 64u);
  EXPECT_GE(count(sm90, "HMMA.16816.F32"), 128u);
}

}  // namespace
}  // namespace ktune::kernel_templates
