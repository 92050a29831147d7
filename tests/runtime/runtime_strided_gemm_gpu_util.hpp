#pragma once
// The strided-view gemm of the runtime's gpu tests: A, B and C as views into wider device buffers
// (rows further apart than their length, starting some columns in: a column slice of a fused QKV
// projection's input or output), every other element of those buffers holding a fill that must
// not matter (NaN around the inputs, so a read of it shows) or must not change (a sentinel around
// C), and the float64 reference of the views.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernel_templates/gemm/reference_gemm.hpp"
#include "tests/runtime/runtime_ops_gpu_util.hpp"

namespace ktune::runtime::ops_gpu_test {

/// Byte every element around C's view holds: 0x5A5A is a finite bf16 and f16, 0x5A5A5A5A a finite f32.
inline constexpr uint8_t kSentinelByte = 0x5A;
/// Byte every element around an input view holds: NaN in every float format.
inline constexpr uint8_t kNanByte = 0xFF;

/// A rows x cols view into a row-major device buffer of `rows` rows `ld` elements apart, starting
/// at column `col`; every element of the buffer outside the view holds `fill` bytes.
struct View2d {
  DType dtype;
  int64_t rows, cols, ld, col;
  uint8_t fill;
  std::vector<double> values;  ///< the view's values, row-major (inputs)
  DeviceBuffer device;

  /// `seed` != 0: random values in ±[lo, hi) (never zero, rounded to the dtype); 0: an output,
  /// poisoned (NaN).
  View2d(int64_t rows_, int64_t cols_, int64_t ld_, int64_t col_, DType d, uint8_t fill_, uint32_t seed,
         double lo = 0.25, double hi = 1.0)
      : dtype(d), rows(rows_), cols(cols_), ld(ld_), col(col_), fill(fill_) {
    const std::size_t e = ktune::size_of(d);
    std::vector<std::byte> bytes(static_cast<std::size_t>(rows * ld) * e, std::byte{fill});
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> mag(lo, hi);
    if (seed != 0) values.resize(static_cast<std::size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        std::byte* at = bytes.data() + static_cast<std::size_t>(r * ld + col + c) * e;
        if (seed == 0) {
          std::fill(at, at + e, std::byte{kNanByte});
          continue;
        }
        const double v = kt::round_to_dtype((rng() & 1 ? -1.0 : 1.0) * mag(rng), d);
        values[static_cast<std::size_t>(r * cols + c)] = v;
        encode(v, d, at);
      }
    }
    device = DeviceBuffer::from_host<std::byte>(bytes);
  }

  void* ptr() const {
    return reinterpret_cast<void*>(device.get() + static_cast<CUdeviceptr>(col) * ktune::size_of(dtype));
  }

  /// The view's elements read back; `outside_changed` gets how many elements outside the view no
  /// longer hold the fill, `first_changed` where the first one is.
  std::vector<double> read(int64_t& outside_changed, std::string& first_changed) const {
    const std::size_t e = ktune::size_of(dtype);
    const auto bytes = device.download_as<std::byte>(static_cast<std::size_t>(rows * ld) * e);
    std::vector<std::byte> view(static_cast<std::size_t>(rows * cols) * e);
    outside_changed = 0;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < ld; ++c) {
        const std::byte* at = bytes.data() + static_cast<std::size_t>(r * ld + c) * e;
        if (c >= col && c < col + cols) {
          std::copy(at, at + e, view.data() + static_cast<std::size_t>(r * cols + c - col) * e);
        } else if (std::any_of(at, at + e, [&](std::byte b) { return b != std::byte{fill}; })) {
          if (outside_changed++ == 0) first_changed = fmt::format("row {}, column {} of the buffer", r, c);
        }
      }
    }
    return ktune::decode(dtype, view);
  }
};

/// One gemm on views: A [m, k] at column a_col of rows k + a_pad long, B likewise (its rows: n
/// for kNT, k for kNN), C [m, n] at column c_col of rows c_col + n + c_pad long.
struct StridedGemm {
  int64_t m, n, k;
  int64_t a_pad = 0, a_col = 0, b_pad = 0, b_col = 0, c_pad = 0, c_col = 0;
  Layout layout = Layout::kNT;
  Epilogue epilogue = Epilogue::kNone;
  DType dtype = DType::kBF16;

  int64_t lda() const { return a_col + k + a_pad; }
  int64_t b_rows() const { return layout == Layout::kNT ? n : k; }
  int64_t b_row() const { return layout == Layout::kNT ? k : n; }
  int64_t ldb() const { return b_col + b_row() + b_pad; }
  int64_t ldc() const { return c_col + n + c_pad; }
  std::string text() const {
    return fmt::format(
        "gemm {} m={} n={} k={} {} epilogue {}: A at column {} lda={}, B at column {} ldb={}, "
        "C at column {} ldc={}",
        to_string(dtype), m, n, k, to_string(layout), static_cast<int>(epilogue), a_col, lda(), b_col, ldb(),
        c_col, ldc());
  }
};

/// What one strided call gave: the error against the float64 reference (error()), and how many
/// elements around C's view changed (must be 0).
struct StridedOutcome {
  double error = INFINITY;
  int64_t outside_changed = 0;
  std::string first_changed;
  PlanInfo info;
};

/// Runs `g` through `rt` on fresh random views (prepared first; directly or captured in a CUDA
/// graph and replayed).
inline StridedOutcome run_strided_gemm(Runtime& rt, const StridedGemm& g, bool in_graph, uint32_t seed) {
  const View2d a(g.m, g.k, g.lda(), g.a_col, g.dtype, kNanByte, seed);
  const View2d b(g.b_rows(), g.b_row(), g.ldb(), g.b_col, g.dtype, kNanByte, seed + 1);
  const Tensor bias(static_cast<std::size_t>(g.n), g.dtype, seed + 2, 0.5, 2.0);
  const View2d c(g.m, g.n, g.ldc(), g.c_col, g.dtype, kSentinelByte, 0);
  const GemmArgs args{.a = a.ptr(),
                      .b = b.ptr(),
                      .c = c.ptr(),
                      .bias = bias.ptr(),
                      .m = g.m,
                      .n = g.n,
                      .k = g.k,
                      .lda = g.lda(),
                      .ldb = g.ldb(),
                      .ldc = g.ldc(),
                      .dtype = g.dtype,
                      .layout = g.layout,
                      .epilogue = g.epilogue};
  StridedOutcome out;
  out.info = rt.prepare(args);
  run(in_graph, [&](Stream s) { rt.gemm(args, s); });
  std::vector<double> ref = kt::gemm_reference_f64(
      a.values, b.values, g.m, g.n, g.k, g.layout == Layout::kNT ? kt::GemmLayout::kNT : kt::GemmLayout::kNN);
  const bool with_bias = g.epilogue == Epilogue::kBias || g.epilogue == Epilogue::kBiasSilu;
  const bool silu = g.epilogue == Epilogue::kSilu || g.epilogue == Epilogue::kBiasSilu;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (with_bias) ref[i] += bias.values[i % static_cast<std::size_t>(g.n)];
    if (silu) ref[i] = ref[i] / (1.0 + std::exp(-ref[i]));
  }
  out.error = error(c.read(out.outside_changed, out.first_changed), ref);
  return out;
}

}  // namespace ktune::runtime::ops_gpu_test
