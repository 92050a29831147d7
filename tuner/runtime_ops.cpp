/// ktune::Runtime's entry points of the operators besides gemm (rmsnorm, rmsnorm_rope, softmax,
/// swiglu, decode_attention, fp8_gemm): each one checks its own arguments (D8) and hands its pointers and
/// scalars, in its binding's slot order (tuner/detail/op_binding.cpp), to the generic path
/// Runtime::Impl::run.

#include <cmath>

#include <fmt/format.h>

#include "ktune/ktune.hpp"
#include "tuner/detail/op_binding.hpp"
#include "tuner/detail/runtime_impl.hpp"

namespace ktune {
namespace {

using tuner::detail::check_dims;
using tuner::detail::check_pointers;
using tuner::detail::element_bytes;
using tuner::detail::OpKind;
using tuner::detail::PlanKey;

/// f32 cos/sin table and int32 positions/lengths.
constexpr std::size_t kWord = 4;

void check_eps(const char* op, float eps) {
  if (!(eps > 0.0f) || !std::isfinite(eps))
    throw Error(ErrorKind::kBadInput, fmt::format("{}: eps={} must be finite and > 0", op, eps));
}

uint8_t mode_of(SoftmaxMask mask) {
  switch (mask) {
    case SoftmaxMask::kNone:
      return 0;
    case SoftmaxMask::kCausal:
      return 1;
    case SoftmaxMask::kPadding:
      return 2;
  }
  throw Error(ErrorKind::kBadInput, fmt::format("softmax: unknown mask {}", static_cast<int>(mask)));
}

uint8_t mode_of(RopeStyle style) {
  if (style != RopeStyle::kNeox && style != RopeStyle::kGptj)
    throw Error(ErrorKind::kBadInput, fmt::format("rmsnorm_rope: unknown style {}", static_cast<int>(style)));
  return style == RopeStyle::kGptj ? 1 : 0;
}

PlanKey rmsnorm_key(int64_t rows, int64_t hidden, DType dtype, bool residual) {
  return {OpKind::kRmsNorm, static_cast<uint8_t>(residual ? 1 : 0), dtype, {rows, hidden, 0, 0, 0}};
}

PlanKey rope_key(int64_t tokens, int64_t hq, int64_t hk, int64_t d, RopeStyle style, DType dtype) {
  return {OpKind::kRmsNormRope, mode_of(style), dtype, {tokens, hq, hk, d, 0}};
}

PlanKey softmax_key(int64_t rows, int64_t cols, SoftmaxMask mask, DType dtype) {
  return {OpKind::kSoftmax, mode_of(mask), dtype, {rows, cols, 0, 0, 0}};
}

PlanKey decode_key(int64_t batch, int64_t hq, int64_t hk, int64_t seq, int64_t seq_max, int64_t d, bool lens,
                   DType dtype) {
  return {OpKind::kDecodeAttention, 0,       dtype,
          {batch, hq, hk, seq, d},  seq_max, static_cast<uint8_t>(lens ? tuner::detail::kContextLens : 0)};
}

PlanKey fp8_key(int64_t m, int64_t n, int64_t k, Fp8Scaling scaling) {
  if (scaling != Fp8Scaling::kPerTensor && scaling != Fp8Scaling::kRowCol)
    throw Error(ErrorKind::kBadInput, fmt::format("fp8_gemm: unknown scaling {}", static_cast<int>(scaling)));
  return {OpKind::kFp8Gemm,
          static_cast<uint8_t>(scaling == Fp8Scaling::kRowCol ? 1 : 0),
          DType::kFP8E4M3,
          {m, n, k, 0, 0}};
}

void check_decode(int64_t batch, int64_t hq, int64_t hk, int64_t seq, int64_t seq_max, int64_t d) {
  check_dims("decode_attention", {{"batch", batch},
                                  {"heads_q", hq},
                                  {"heads_kv", hk},
                                  {"seq", seq},
                                  {"seq_max", seq_max},
                                  {"head_dim", d}});
  if (seq > seq_max) {
    throw Error(
        ErrorKind::kBadInput,
        fmt::format("decode_attention: context seq={} is past the KV cache (seq_max={})", seq, seq_max));
  }
  if (hq % hk != 0) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("decode_attention: heads_q={} is not a multiple of heads_kv={}", hq, hk));
  }
}

PlanKey swiglu_key(int64_t m, int64_t i, DType dtype, bool split) {
  return {OpKind::kSwiglu, static_cast<uint8_t>(split ? 1 : 0), dtype, {m, i, 0, 0, 0}};
}

}  // namespace

// ---- rmsnorm

PlanInfo Runtime::prepare_rmsnorm(int64_t rows, int64_t hidden, DType dtype, bool residual) {
  check_dims("rmsnorm", {{"rows", rows}, {"hidden", hidden}});
  return impl_->plan(rmsnorm_key(rows, hidden, dtype, residual), std::nullopt).info;
}

void Runtime::rmsnorm(const void* x, const void* w, void* y, int64_t rows, int64_t hidden, float eps,
                      DType dtype, Stream stream) {
  check_dims("rmsnorm", {{"rows", rows}, {"hidden", hidden}});
  const std::size_t e = element_bytes(dtype);
  check_pointers("rmsnorm", {{"x", x, e}, {"w", w, e}, {"y", y, e}});
  check_eps("rmsnorm", eps);
  const void* slots[] = {x, nullptr, w, y, nullptr};
  const double scalars[] = {eps};
  impl_->run(rmsnorm_key(rows, hidden, dtype, false), slots, scalars, nullptr, 0, stream);
}

void Runtime::rmsnorm_residual(const void* x, const void* residual, const void* w, void* y,
                               void* residual_out, int64_t rows, int64_t hidden, float eps, DType dtype,
                               Stream stream) {
  check_dims("rmsnorm", {{"rows", rows}, {"hidden", hidden}});
  const std::size_t e = element_bytes(dtype);
  check_pointers(
      "rmsnorm",
      {{"x", x, e}, {"residual", residual, e}, {"w", w, e}, {"y", y, e}, {"residual_out", residual_out, e}});
  check_eps("rmsnorm", eps);
  const void* slots[] = {x, residual, w, y, residual_out};
  const double scalars[] = {eps};
  impl_->run(rmsnorm_key(rows, hidden, dtype, true), slots, scalars, nullptr, 0, stream);
}

// ---- rmsnorm_rope

PlanInfo Runtime::prepare_rmsnorm_rope(int64_t tokens, int64_t heads_q, int64_t heads_kv, int64_t head_dim,
                                       RopeStyle style, DType dtype) {
  check_dims("rmsnorm_rope",
             {{"tokens", tokens}, {"heads_q", heads_q}, {"heads_kv", heads_kv}, {"head_dim", head_dim}});
  return impl_->plan(rope_key(tokens, heads_q, heads_kv, head_dim, style, dtype), std::nullopt).info;
}

void Runtime::rmsnorm_rope(const void* q, const void* k, const void* q_weight, const void* k_weight,
                           const float* cos_sin, const int32_t* positions, void* q_out, void* k_out,
                           int64_t tokens, int64_t heads_q, int64_t heads_kv, int64_t head_dim,
                           int64_t max_pos, float eps, RopeStyle style, DType dtype, Stream stream) {
  check_dims("rmsnorm_rope", {{"tokens", tokens},
                              {"heads_q", heads_q},
                              {"heads_kv", heads_kv},
                              {"head_dim", head_dim},
                              {"max_pos", max_pos}});
  const std::size_t e = element_bytes(dtype);
  check_pointers("rmsnorm_rope", {{"q", q, e},
                                  {"k", k, e},
                                  {"q_weight", q_weight, e},
                                  {"k_weight", k_weight, e},
                                  {"cos_sin", cos_sin, kWord},
                                  {"positions", positions, kWord},
                                  {"q_out", q_out, e},
                                  {"k_out", k_out, e}});
  check_eps("rmsnorm_rope", eps);
  const void* slots[] = {q, k, q_weight, k_weight, cos_sin, positions, q_out, k_out};
  const double scalars[] = {static_cast<double>(max_pos), eps};
  impl_->run(rope_key(tokens, heads_q, heads_kv, head_dim, style, dtype), slots, scalars, nullptr, 0, stream);
}

// ---- softmax

PlanInfo Runtime::prepare_softmax(int64_t rows, int64_t cols, SoftmaxMask mask, DType dtype) {
  check_dims("softmax", {{"rows", rows}, {"cols", cols}});
  return impl_->plan(softmax_key(rows, cols, mask, dtype), std::nullopt).info;
}

void Runtime::softmax(const void* x, void* y, const int32_t* lengths, int64_t rows, int64_t cols, float scale,
                      SoftmaxMask mask, DType dtype, Stream stream) {
  check_dims("softmax", {{"rows", rows}, {"cols", cols}});
  const std::size_t e = element_bytes(dtype);
  check_pointers("softmax", {{"x", x, e}, {"y", y, e}});
  if (mask == SoftmaxMask::kPadding) check_pointers("softmax", {{"lengths (kPadding)", lengths, kWord}});
  if (!std::isfinite(scale))
    throw Error(ErrorKind::kBadInput, fmt::format("softmax: scale={} is not finite", scale));
  const void* slots[] = {x, y, mask == SoftmaxMask::kPadding ? lengths : nullptr};
  const double scalars[] = {scale};
  impl_->run(softmax_key(rows, cols, mask, dtype), slots, scalars, nullptr, 0, stream);
}

// ---- swiglu

PlanInfo Runtime::prepare_swiglu(int64_t m, int64_t i, DType dtype, bool split) {
  check_dims("swiglu", {{"m", m}, {"i", i}});
  return impl_->plan(swiglu_key(m, i, dtype, split), std::nullopt).info;
}

void Runtime::swiglu(const void* x, void* out, int64_t m, int64_t i, DType dtype, Stream stream) {
  check_dims("swiglu", {{"m", m}, {"i", i}});
  const std::size_t e = element_bytes(dtype);
  check_pointers("swiglu", {{"x", x, e}, {"out", out, e}});
  const void* slots[] = {x, nullptr, nullptr, out};
  impl_->run(swiglu_key(m, i, dtype, false), slots, {}, nullptr, 0, stream);
}

void Runtime::swiglu(const void* gate, const void* up, void* out, int64_t m, int64_t i, DType dtype,
                     Stream stream) {
  check_dims("swiglu", {{"m", m}, {"i", i}});
  const std::size_t e = element_bytes(dtype);
  check_pointers("swiglu", {{"gate", gate, e}, {"up", up, e}, {"out", out, e}});
  const void* slots[] = {nullptr, gate, up, out};
  impl_->run(swiglu_key(m, i, dtype, true), slots, {}, nullptr, 0, stream);
}

// ---- decode_attention

PlanInfo Runtime::prepare_decode_attention(int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t seq,
                                           int64_t seq_max, int64_t head_dim, bool context_lens,
                                           DType dtype) {
  check_decode(batch, heads_q, heads_kv, seq, seq_max, head_dim);
  return impl_
      ->plan(decode_key(batch, heads_q, heads_kv, seq, seq_max, head_dim, context_lens, dtype), std::nullopt)
      .info;
}

void Runtime::decode_attention(const void* q, const void* k, const void* v, void* o,
                               const int32_t* context_lens, int64_t batch, int64_t heads_q, int64_t heads_kv,
                               int64_t seq, int64_t seq_max, int64_t head_dim, float scale, DType dtype,
                               Stream stream) {
  check_decode(batch, heads_q, heads_kv, seq, seq_max, head_dim);
  const std::size_t e = element_bytes(dtype);
  check_pointers("decode_attention", {{"q", q, e}, {"k", k, e}, {"v", v, e}, {"o", o, e}});
  if (context_lens != nullptr) check_pointers("decode_attention", {{"context_lens", context_lens, kWord}});
  if (!std::isfinite(scale))
    throw Error(ErrorKind::kBadInput, fmt::format("decode_attention: scale={} is not finite", scale));
  const double s = scale != 0.0f ? scale : 1.0 / std::sqrt(static_cast<double>(head_dim));
  const void* slots[] = {q, k, v, o, context_lens};
  const double scalars[] = {s};
  impl_->run(decode_key(batch, heads_q, heads_kv, seq, seq_max, head_dim, context_lens != nullptr, dtype),
             slots, scalars, nullptr, 0, stream);
}

// ---- fp8_gemm

PlanInfo Runtime::prepare_fp8_gemm(int64_t m, int64_t n, int64_t k, Fp8Scaling scaling) {
  check_dims("fp8_gemm", {{"m", m}, {"n", n}, {"k", k}});
  return impl_->plan(fp8_key(m, n, k, scaling), std::nullopt).info;
}

void Runtime::fp8_gemm(const void* a, const void* b, const float* a_scale, const float* b_scale, void* c,
                       int64_t m, int64_t n, int64_t k, Fp8Scaling scaling, Stream stream) {
  check_dims("fp8_gemm", {{"m", m}, {"n", n}, {"k", k}});
  constexpr std::size_t kBf16 = 2;  // C's element
  check_pointers(
      "fp8_gemm",
      {{"a", a, 1}, {"b", b, 1}, {"a_scale", a_scale, kWord}, {"b_scale", b_scale, kWord}, {"c", c, kBf16}});
  const void* slots[] = {a, b, a_scale, b_scale, c};
  impl_->run(fp8_key(m, n, k, scaling), slots, {}, nullptr, 0, stream);
}

}  // namespace ktune
