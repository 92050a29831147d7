// gpu: every gemm template on strided views (rows further apart than their length), against the
// CPU float64 reference of the same values: tiled (f32, bf16), gemv (bf16, f16), mma (bf16, f16,
// with bias/SiLU epilogues), wgmma and wgmma_tma (sm_90: bf16, f16, with epilogues), each with a
// split-K config, at odd sizes, both layouts where the template has them. The stride cases: A's,
// B's and C's stride alone (odd: the element paths), all three keeping 16-byte rows (the
// vector/cp.async/TMA paths), all three odd; C also starts a few elements into its buffer (a
// column slice of a wider output). The rows' padding of A and B holds NaN, so a kernel that reads
// it fails; C's padding holds a sentinel that must come back unchanged. A failure names the
// template's config, the shape, and lda/ldb/ldc. Skips with the reason without a GPU (the wgmma
// tests also off sm_90).

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gemm_gpu_fixture.hpp"
#include "gemm_mma_samples.hpp"
#include "gemm_samples.hpp"
#include "gemm_wgmma_samples.hpp"
#include "gpu_plan_runner.hpp"
#include "kernel_templates/gemm/gemm_mma_spec.hpp"
#include "kernel_templates/gemm/gemm_wgmma_spec.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "measure/tolerance.hpp"
#include "measure/verification.hpp"

namespace ktune::kernel_templates {
namespace {

using testing::gemm_problem;

/// Byte every element of C's padding holds before and after a run: 0x5A5A is a finite bf16 and
/// f16, 0x5A5A5A5A a finite f32, so a padding element that a kernel overwrites changes.
constexpr uint8_t kPadByte = 0x5A;

/// Elements added to each row of A, B and C (0: contiguous), and how far into its buffer C starts.
struct Pads {
  int64_t a = 0, b = 0, c = 0;
  int64_t c_offset = 0;
};

/// Each operand strided alone with an odd pad (element paths), all three with pads that keep
/// 16-byte rows (vector paths), all three odd with C at an odd offset (single-element C stores).
const std::vector<Pads>& stride_cases() {
  static const std::vector<Pads> kCases = {
      {13, 0, 0, 0}, {0, 11, 0, 0}, {0, 0, 7, 0}, {24, 40, 72, 8}, {3, 5, 9, 3},
  };
  return kCases;
}

/// As stride_cases(), with A's and B's pads multiples of 8 elements: TMA needs 16-byte rows
/// (an lda or ldb that is not is the runtime's to route to another config).
const std::vector<Pads>& tma_stride_cases() {
  static const std::vector<Pads> kCases = {
      {8, 0, 0, 0}, {0, 16, 0, 0}, {0, 0, 7, 0}, {24, 40, 72, 8}, {8, 8, 9, 3},
  };
  return kCases;
}

testing::GpuSession& gpu() { return testing::gpu_session(); }

/// The problem's logical inputs (contiguous bytes and their values) and its CPU float64 output.
struct Inputs {
  Problem problem;
  std::map<std::string, std::vector<uint8_t>> bytes;
  HostTensors values;
  std::vector<double> expected;
};

Inputs make_inputs(const KernelSpec& spec, const Problem& problem, uint64_t seed) {
  Inputs in;
  in.problem = problem;
  for (const TensorSpec& t : spec.reference(problem).plan.tensors) {
    if (t.role != TensorRole::kInput) continue;
    in.bytes[t.name] = testing::random_tensor(t.dtype, t.elements, seed++, in.values[t.name]);
  }
  in.expected = spec.cpu_reference(problem, in.values).at("c");
  return in;
}

/// Rows and row length of operand `name` ("a", "b", "c") of a gemm problem.
std::pair<int64_t, int64_t> shape_of(const Problem& p, const std::string& name) {
  const bool nn = p.layout.starts_with("nn");
  if (name == "a") return {p.dim("m"), p.dim("k")};
  if (name == "b") return nn ? std::pair{p.dim("k"), p.dim("n")} : std::pair{p.dim("n"), p.dim("k")};
  return {p.dim("m"), p.dim("n")};
}

/// `rows` x `row` elements of `contiguous` placed `ld` elements apart, the gaps filled with `fill`.
std::vector<uint8_t> spread_rows(const std::vector<uint8_t>& contiguous, int64_t rows, int64_t row,
                                 int64_t ld, std::size_t elem, uint8_t fill) {
  std::vector<uint8_t> out(static_cast<std::size_t>(rows * ld) * elem, fill);
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(out.data() + static_cast<std::size_t>(r * ld) * elem,
                contiguous.data() + static_cast<std::size_t>(r * row) * elem,
                static_cast<std::size_t>(row) * elem);
  }
  return out;
}

std::string strides_text(const Problem& p, const Pads& pads) {
  const auto [ar, a_row] = shape_of(p, "a");
  const auto [br, b_row] = shape_of(p, "b");
  const auto [cr, c_row] = shape_of(p, "c");
  return fmt::format("lda={} ldb={} ldc={} (pads {}, {}, {}; C at +{} elements)", a_row + pads.a,
                     b_row + pads.b, c_row + pads.c, pads.a, pads.b, pads.c, pads.c_offset);
}

/// Runs `config` with A, B and C as strided views (`pads`) and checks C against the reference and
/// its padding against the sentinel; every failure names the config, the shape and the strides.
void expect_strided_matches(const KernelSpec& spec, const Inputs& in, const Config& config,
                            const Pads& pads) {
  const Problem& p = in.problem;
  const std::string label =
      fmt::format("{} @ {} {}", spec.canonical_name(p, config), p.shape_text(), strides_text(p, pads));
  if (auto why = spec.rejection(p, config)) {
    ADD_FAILURE() << label << ": rejected: " << *why;
    return;
  }
  try {
    const std::size_t elem = ktune::size_of(p.dtype);
    LaunchPlan plan = spec.launch_plan(p, config);
    const std::map<std::string, int64_t> pad_of = {{"a", pads.a}, {"b", pads.b}, {"c", pads.c}};
    for (const auto& [name, pad] : pad_of) {
      if (pad > 0) plan.set_row_stride(name, shape_of(p, name).second + pad);
    }
    testing::DeviceTensors tensors;
    for (const TensorSpec& t : plan.tensors) {
      tensors.ensure(t, t.name == "c" ? static_cast<std::size_t>(pads.c_offset) * elem : 0);
      if (t.name == "a" || t.name == "b") {
        const auto [rows, row] = shape_of(p, t.name);
        tensors.upload(t.name,
                       spread_rows(in.bytes.at(t.name), rows, row, row + pad_of.at(t.name), elem, 0xFF));
      } else if (t.role == TensorRole::kInput) {
        tensors.upload(t.name, in.bytes.at(t.name));  // bias
      } else if (t.name == "c") {
        const auto [rows, row] = shape_of(p, "c");
        const std::vector<uint8_t> poisoned(static_cast<std::size_t>(rows * row) * elem, 0xFF);
        tensors.upload("c", spread_rows(poisoned, rows, row, row + pads.c, elem, kPadByte));
      } else {
        tensors.poison(t.name);
      }
    }
    testing::run_plan(*gpu().kernels, spec.compile_spec(p, config), plan, tensors);

    const auto [rows, row] = shape_of(p, "c");
    const int64_t ldc = row + pads.c;
    const auto c = tensors.download("c", static_cast<std::size_t>(rows * ldc) * elem);
    std::vector<uint8_t> logical(static_cast<std::size_t>(rows * row) * elem);
    int64_t pad_writes = 0;
    std::string first_pad_write;
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(logical.data() + static_cast<std::size_t>(r * row) * elem,
                  c.data() + static_cast<std::size_t>(r * ldc) * elem, static_cast<std::size_t>(row) * elem);
      for (int64_t col = row; col < ldc; ++col) {
        for (std::size_t b = 0; b < elem; ++b) {
          if (c[static_cast<std::size_t>(r * ldc + col) * elem + b] == kPadByte) continue;
          if (pad_writes++ == 0) first_pad_write = fmt::format("row {}, column {}", r, col);
          break;
        }
      }
    }
    EXPECT_EQ(pad_writes, 0) << label << ": wrote " << pad_writes
                             << " elements of C's padding (columns >= n=" << row << "), first at "
                             << first_pad_write;
    const auto out = ktune::decode(p.dtype, std::as_bytes(std::span(logical)));
    const measure::Verdict v =
        measure::judge(measure::compare(out, in.expected), measure::tolerance_for(p.dtype));
    if (!v.ok) {
      std::size_t worst = 0;
      double worst_err = -1;
      for (std::size_t i = 0; i < out.size(); ++i) {
        const double e = std::isfinite(out[i]) ? std::fabs(out[i] - in.expected[i]) : INFINITY;
        if (e > worst_err) {
          worst_err = e;
          worst = i;
        }
      }
      ADD_FAILURE() << label << ": " << v.reason << "; worst element row "
                    << worst / static_cast<std::size_t>(row) << ", column "
                    << worst % static_cast<std::size_t>(row) << ": " << out[worst] << " vs "
                    << in.expected[worst];
    }
  } catch (const Error& e) {
    ADD_FAILURE() << label << ": " << e.what() << "\n" << e.detail();
  }
}

/// Every config on every stride case of `problem`, compiles prefetched first.
void run_all(const KernelSpec& spec, const Problem& problem, const std::vector<Config>& configs,
             const std::vector<Pads>& cases, uint64_t seed) {
  for (const Config& c : configs) {
    if (!spec.rejection(problem, c)) gpu().kernels->prefetch(spec.compile_spec(problem, c));
  }
  const Inputs in = make_inputs(spec, problem, seed);
  for (const Config& c : configs) {
    for (const Pads& pads : cases) expect_strided_matches(spec, in, c, pads);
  }
}

class GemmStridedGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu().context) GTEST_SKIP() << gpu().skip_reason;
    gpu().context->make_current();
  }
};

TEST_F(GemmStridedGpu, TiledReadsAndWritesStridedViews) {
  const KernelSpec& spec = find_spec("gemm", "tiled");
  const std::vector<Config> configs = {testing::tiled_config(64, 64, 32, 2, 2, 3, 1),
                                       testing::tiled_config(32, 64, 16, 1, 2, 2, 4),
                                       testing::tiled_config(128, 64, 64, 4, 2, 4, 2)};
  // Odd K and N (element loads whatever the strides); K and N multiples of 8 (16-byte copies when
  // the strides keep rows 16-byte aligned).
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    for (const char* layout : {"nt", "nn"}) {
      run_all(spec, gemm_problem(77, 93, 331, dtype, layout), configs, stride_cases(), 101);
      run_all(spec, gemm_problem(77, 96, 336, dtype, layout), configs, stride_cases(), 111);
    }
  }
}

TEST_F(GemmStridedGpu, GemvReadsAndWritesStridedViews) {
  const KernelSpec& spec = find_spec("gemm", "gemv");
  const std::vector<Config> configs = {testing::gemv_config(256, 1, 4, 2), testing::gemv_config(512, 4, 8, 1),
                                       testing::gemv_config(256, 2, 2, 4)};
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    run_all(spec, gemm_problem(5, 301, 1000, dtype, "nt"), configs, stride_cases(), 201);
    run_all(spec, gemm_problem(1, 77, 1024, dtype, "nt"), configs, stride_cases(), 211);
  }
}

TEST_F(GemmStridedGpu, MmaReadsAndWritesStridedViewsWithEpiloguesAndSplitK) {
  // No split; deterministic split-K (reduction or finishing pass); atomic split-K (zeroed f32 sums,
  // then the conversion pass).
  const KernelSpec& spec = find_spec("gemm", "mma");
  const std::vector<Config> configs = {testing::mma_config(64, 128, 32, 2, 2, 3, 1, 0, 8),
                                       testing::mma_config(16, 64, 128, 1, 4, 4, 4, 0, 1),
                                       testing::mma_config(32, 128, 64, 1, 4, 3, 8, 1, 1)};
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (const char* layout : {"nt", "nn", "nt+bias+silu", "nn+bias"}) {
      run_all(spec, gemm_problem(77, 93, 331, dtype, layout), configs, stride_cases(), 301);
      run_all(spec, gemm_problem(77, 96, 336, dtype, layout), configs, stride_cases(), 311);
    }
  }
}

TEST_F(GemmStridedGpu, WgmmaReadsAndWritesStridedViewsWithEpiloguesAndSplitK) {
  if (auto why = WgmmaGemmSpec::rejection_for_arch(gpu().arch)) GTEST_SKIP() << *why;
  const KernelSpec& spec = find_spec("gemm", "wgmma");
  const std::vector<Config> configs = {testing::wgmma_config(64, 64, 3, 1),
                                       testing::wgmma_config(128, 128, 4, 8, 3)};
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (const char* layout : {"nt", "nn", "nt+bias+silu"})
      run_all(spec, gemm_problem(133, 200, 520, dtype, layout), configs, stride_cases(), 401);
  }
}

TEST_F(GemmStridedGpu, WgmmaTmaReadsStridedViewsThroughItsTensorMaps) {
  if (auto why = WgmmaGemmSpec::rejection_for_arch(gpu().arch)) GTEST_SKIP() << *why;
  const KernelSpec& spec = find_spec("gemm", "wgmma_tma");
  auto tma = [](int64_t bm, int64_t bn, int64_t stages, int64_t split) {
    Config c = testing::wgmma_config(bm, bn, stages, 8, split);
    c.variant = "wgmma_tma";
    return c;
  };
  const std::vector<Config> configs = {tma(128, 128, 4, 1), tma(64, 128, 6, 1), tma(128, 128, 4, 3)};
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (const char* layout : {"nt", "nt+bias+silu"})
      run_all(spec, gemm_problem(133, 200, 520, dtype, layout), configs, tma_stride_cases(), 501);
  }
}

}  // namespace
}  // namespace ktune::kernel_templates
