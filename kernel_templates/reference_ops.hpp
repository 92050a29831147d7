#pragma once
/// CPU float64 references of the memory-bound LLM operators (rmsnorm, rmsnorm_rope, softmax,
/// swiglu): the definitions the templates and their GPU references are checked against (D4). Inputs
/// are the values the device sees (already rounded to the dtype); nothing is rounded here except
/// where the operator itself rounds (the residual sum, stored in the dtype). Meant for small shapes.

#include <cstdint>
#include <span>
#include <vector>

#include "core/dtype.hpp"

namespace ktune::kernel_templates {

/// `v` rounded to nearest-even in `dtype` (f32, f16 or bf16; subnormals kept, no overflow check).
double round_to_dtype(double v, ktune::DType dtype);

/// rmsnorm outputs.
struct RmsNormResult {
  std::vector<double> y;             ///< [rows, hidden]
  std::vector<double> residual_out;  ///< [rows, hidden] when a residual was given, else empty
};

/// y = s / sqrt(mean(s^2) + eps) * w per row, s = x, or s = round_dtype(x + residual) when
/// `residual` is not empty (then residual_out = s). x, residual: [rows, hidden]; w: [hidden].
RmsNormResult rmsnorm_f64(std::span<const double> x, std::span<const double> residual,
                          std::span<const double> w, int64_t rows, int64_t hidden, double eps,
                          ktune::DType dtype);

/// The rotary pairing of rmsnorm_rope.
enum class RopeStyle {
  kNeox,  ///< rotate-half: element j pairs with j + D/2
  kGptj,  ///< interleaved: element 2j pairs with 2j + 1
};

/// Per-head RMSNorm then rotary embedding of one tensor x [tokens, heads, head_dim] with weight w
/// [head_dim]; cos_sin [max_pos, head_dim] (cos at [p][j], sin at [p][D/2 + j]); positions [tokens]
/// as int32 values, used modulo max_pos as unsigned 32-bit (as the kernel does).
std::vector<double> rmsnorm_rope_f64(std::span<const double> x, std::span<const double> w,
                                     std::span<const double> cos_sin, std::span<const int32_t> positions,
                                     int64_t tokens, int64_t heads, int64_t head_dim, int64_t max_pos,
                                     RopeStyle style, double eps);

/// The precomputed table cos_sin [max_pos, head_dim] for base `theta`: angle(p, j) = p *
/// theta^(-2j / head_dim), cos at [p][j], sin at [p][head_dim/2 + j].
std::vector<double> rope_table_f64(int64_t max_pos, int64_t head_dim, double theta);

/// The softmax mask.
enum class SoftmaxMask {
  kNone,     ///< every column
  kCausal,   ///< column c of row r masked when c > r + row_offset
  kPadding,  ///< column c of row r masked when c >= lengths[r] mod (cols + 1) (unsigned)
};

/// Valid (unmasked) prefix of row `row`: columns [0, n) are unmasked.
int64_t softmax_valid_columns(SoftmaxMask mask, int64_t row, int64_t cols, int64_t row_offset,
                              std::span<const int32_t> lengths);

/// y[r, c] = exp(scale x[r,c] - max) / sum over the unmasked columns; masked columns and rows with
/// no unmasked column give 0. x: [rows, cols]; lengths [rows] only for kPadding.
std::vector<double> softmax_f64(std::span<const double> x, int64_t rows, int64_t cols, double scale,
                                SoftmaxMask mask, int64_t row_offset, std::span<const int32_t> lengths);

/// out = silu(gate) * up elementwise; silu(g) = g / (1 + exp(-g)).
std::vector<double> swiglu_f64(std::span<const double> gate, std::span<const double> up);

/// Splits a fused [rows, 2 * inter] input into gate (first half of each row) and up (second half).
void split_gate_up(std::span<const double> fused, int64_t rows, int64_t inter, std::vector<double>& gate,
                   std::vector<double>& up);

}  // namespace ktune::kernel_templates
