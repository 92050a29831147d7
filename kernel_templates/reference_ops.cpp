#include "kernel_templates/reference_ops.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

/// Rounds to `bits` significant bits, the exponent (of frexp) not below `min_exp` (subnormals).
double round_significant(double v, int bits, int min_exp) {
  if (v == 0.0 || !std::isfinite(v)) return v;
  int e = 0;
  std::frexp(v, &e);
  const int q = std::max(e, min_exp) - bits;
  return std::ldexp(std::nearbyint(std::ldexp(v, -q)), q);  // nearbyint: round half to even
}

void require_size(std::span<const double> v, int64_t n, const char* what) {
  if (static_cast<int64_t>(v.size()) != n) {
    throw Error(ErrorKind::kBadInput, std::string(what) + " has " + std::to_string(v.size()) +
                                          " elements, expected " + std::to_string(n));
  }
}

}  // namespace

double round_to_dtype(double v, ktune::DType dtype) {
  switch (dtype) {
    case ktune::DType::kF32:
      return round_significant(v, 24, -125);  // binary32: 24 bits, smallest normal 2^-126
    case ktune::DType::kF16:
      return round_significant(v, 11, -13);  // binary16: 11 bits, smallest normal 2^-14
    case ktune::DType::kBF16:
      return round_significant(v, 8, -125);  // bfloat16: 8 bits, f32's exponent range
    default:
      throw Error(ErrorKind::kBadInput, "round_to_dtype: f32, f16 or bf16 only");
  }
}

RmsNormResult rmsnorm_f64(std::span<const double> x, std::span<const double> residual,
                          std::span<const double> w, int64_t rows, int64_t hidden, double eps,
                          ktune::DType dtype) {
  require_size(x, rows * hidden, "rmsnorm x");
  require_size(w, hidden, "rmsnorm w");
  const bool has_residual = !residual.empty();
  if (has_residual) require_size(residual, rows * hidden, "rmsnorm residual");
  RmsNormResult out;
  out.y.resize(static_cast<std::size_t>(rows * hidden));
  if (has_residual) out.residual_out.resize(out.y.size());
  std::vector<double> s(static_cast<std::size_t>(hidden));
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < hidden; ++i) {
      const auto idx = static_cast<std::size_t>(r * hidden + i);
      double v = x[idx];
      if (has_residual) {
        v = round_to_dtype(v + residual[idx], dtype);
        out.residual_out[idx] = v;
      }
      s[static_cast<std::size_t>(i)] = v;
      ss += v * v;
    }
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(hidden) + eps);
    for (int64_t i = 0; i < hidden; ++i) {
      const auto ii = static_cast<std::size_t>(i);
      out.y[static_cast<std::size_t>(r * hidden + i)] = s[ii] * inv * w[ii];
    }
  }
  return out;
}

std::vector<double> rmsnorm_rope_f64(std::span<const double> x, std::span<const double> w,
                                     std::span<const double> cos_sin, std::span<const int32_t> positions,
                                     int64_t tokens, int64_t heads, int64_t head_dim, int64_t max_pos,
                                     RopeStyle style, double eps) {
  if (head_dim < 2 || head_dim % 2 != 0) {
    throw Error(ErrorKind::kBadInput, "rmsnorm_rope: head_dim " + std::to_string(head_dim) + " is not even");
  }
  require_size(x, tokens * heads * head_dim, "rmsnorm_rope x");
  require_size(w, head_dim, "rmsnorm_rope w");
  require_size(cos_sin, max_pos * head_dim, "rmsnorm_rope cos_sin");
  if (static_cast<int64_t>(positions.size()) != tokens) {
    throw Error(ErrorKind::kBadInput, "rmsnorm_rope: positions must have one entry a token");
  }
  const int64_t half = head_dim / 2;
  std::vector<double> out(x.size());
  for (int64_t t = 0; t < tokens; ++t) {
    const auto p = static_cast<int64_t>(static_cast<uint32_t>(positions[static_cast<std::size_t>(t)]) %
                                        static_cast<uint32_t>(max_pos));
    const double* cs = cos_sin.data() + p * head_dim;
    for (int64_t h = 0; h < heads; ++h) {
      const std::size_t base = static_cast<std::size_t>((t * heads + h) * head_dim);
      double ss = 0;
      for (int64_t i = 0; i < head_dim; ++i)
        ss += x[base + static_cast<std::size_t>(i)] * x[base + static_cast<std::size_t>(i)];
      const double inv = 1.0 / std::sqrt(ss / static_cast<double>(head_dim) + eps);
      for (int64_t j = 0; j < half; ++j) {
        const int64_t ia = style == RopeStyle::kGptj ? 2 * j : j;
        const int64_t ib = style == RopeStyle::kGptj ? 2 * j + 1 : j + half;
        const double a = x[base + static_cast<std::size_t>(ia)] * inv * w[static_cast<std::size_t>(ia)];
        const double b = x[base + static_cast<std::size_t>(ib)] * inv * w[static_cast<std::size_t>(ib)];
        const double c = cs[j];
        const double s = cs[half + j];
        out[base + static_cast<std::size_t>(ia)] = a * c - b * s;
        out[base + static_cast<std::size_t>(ib)] = b * c + a * s;
      }
    }
  }
  return out;
}

std::vector<double> rope_table_f64(int64_t max_pos, int64_t head_dim, double theta) {
  const int64_t half = head_dim / 2;
  std::vector<double> t(static_cast<std::size_t>(max_pos * head_dim));
  for (int64_t p = 0; p < max_pos; ++p) {
    for (int64_t j = 0; j < half; ++j) {
      const double angle = static_cast<double>(p) *
                           std::pow(theta, -2.0 * static_cast<double>(j) / static_cast<double>(head_dim));
      t[static_cast<std::size_t>(p * head_dim + j)] = std::cos(angle);
      t[static_cast<std::size_t>(p * head_dim + half + j)] = std::sin(angle);
    }
  }
  return t;
}

int64_t softmax_valid_columns(SoftmaxMask mask, int64_t row, int64_t cols, int64_t row_offset,
                              std::span<const int32_t> lengths) {
  switch (mask) {
    case SoftmaxMask::kNone:
      return cols;
    case SoftmaxMask::kCausal:
      return std::clamp<int64_t>(row + row_offset + 1, 0, cols);
    case SoftmaxMask::kPadding:
      return static_cast<int64_t>(static_cast<uint32_t>(lengths[static_cast<std::size_t>(row)]) %
                                  (static_cast<uint64_t>(cols) + 1));
  }
  return cols;
}

std::vector<double> softmax_f64(std::span<const double> x, int64_t rows, int64_t cols, double scale,
                                SoftmaxMask mask, int64_t row_offset, std::span<const int32_t> lengths) {
  require_size(x, rows * cols, "softmax x");
  if (mask == SoftmaxMask::kPadding && static_cast<int64_t>(lengths.size()) != rows) {
    throw Error(ErrorKind::kBadInput, "softmax padding mask needs one length a row");
  }
  std::vector<double> y(x.size(), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = softmax_valid_columns(mask, r, cols, row_offset, lengths);
    const double* xr = x.data() + r * cols;
    double* yr = y.data() + r * cols;
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < n; ++c) m = std::max(m, scale * xr[c]);
    double s = 0;
    for (int64_t c = 0; c < n; ++c) s += std::exp(scale * xr[c] - m);
    for (int64_t c = 0; c < n; ++c) yr[c] = std::exp(scale * xr[c] - m) / s;
  }
  return y;
}

std::vector<double> swiglu_f64(std::span<const double> gate, std::span<const double> up) {
  require_size(up, static_cast<int64_t>(gate.size()), "swiglu up");
  std::vector<double> out(gate.size());
  for (std::size_t i = 0; i < gate.size(); ++i) out[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
  return out;
}

void split_gate_up(std::span<const double> fused, int64_t rows, int64_t inter, std::vector<double>& gate,
                   std::vector<double>& up) {
  require_size(fused, rows * 2 * inter, "swiglu fused input");
  gate.resize(static_cast<std::size_t>(rows * inter));
  up.resize(gate.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < inter; ++j) {
      const auto o = static_cast<std::size_t>(r * inter + j);
      gate[o] = fused[static_cast<std::size_t>(r * 2 * inter + j)];
      up[o] = fused[static_cast<std::size_t>(r * 2 * inter + inter + j)];
    }
  }
}

}  // namespace ktune::kernel_templates
