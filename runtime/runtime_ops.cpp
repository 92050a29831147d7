/// ktune::Runtime's entry points of the operators besides gemm (rmsnorm, rmsnorm_rope, rope_append, softmax,
/// swiglu, decode_attention, fp8_gemm): each one checks its own arguments (D8) and hands its pointers and
/// scalars, in its binding's slot order (runtime/detail/op_binding.cpp), to the generic path
/// Runtime::Impl::run.

#include <cmath>

#include <fmt/format.h>

#include "ktune/ktune.hpp"
#include "runtime/detail/op_binding.hpp"
#include "runtime/detail/runtime_impl.hpp"

namespace ktune {
namespace {

using runtime::detail::check_dims;
using runtime::detail::check_pointers;
using runtime::detail::element_bytes;
using runtime::detail::OpKind;
using runtime::detail::PlanKey;

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

PlanKey rmsnorm_key(const RmsNormArgs& a) {
  check_dims("rmsnorm", {{"rows", a.rows}, {"hidden", a.hidden}});
  return {OpKind::kRmsNorm,
          static_cast<uint8_t>(a.residual != nullptr ? 1 : 0),
          a.dtype,
          {a.rows, a.hidden, 0, 0, 0}};
}

PlanKey rope_key(const RmsNormRopeArgs& a) {
  check_dims(
      "rmsnorm_rope",
      {{"tokens", a.tokens}, {"heads_q", a.heads_q}, {"heads_kv", a.heads_kv}, {"head_dim", a.head_dim}});
  return {OpKind::kRmsNormRope, mode_of(a.style), a.dtype, {a.tokens, a.heads_q, a.heads_kv, a.head_dim, 0}};
}

/// rope_append's mode code: the pairing, then the RMSNorm form and the paged cache
/// (RopeAppendSpec::layouts order).
PlanKey rope_append_key(const RopeAppendArgs& a) {
  const int64_t rot = a.rot_dim != 0 ? a.rot_dim : a.head_dim;
  check_dims("rope_append", {{"tokens", a.tokens},
                             {"heads_q", a.heads_q},
                             {"heads_kv", a.heads_kv},
                             {"head_dim", a.head_dim},
                             {"rot_dim", rot}});
  if ((a.q_weight == nullptr) != (a.k_weight == nullptr))
    throw Error(ErrorKind::kBadInput,
                "rope_append: give both q_weight and k_weight (the RMSNorm form) or neither");
  const bool norm = a.q_weight != nullptr;
  const bool paged = a.block_table != nullptr;
  return {OpKind::kRopeAppend,
          static_cast<uint8_t>(mode_of(a.style) + (norm ? 2 : 0) + (paged ? 4 : 0)),
          a.dtype,
          {a.tokens, a.heads_q, a.heads_kv, a.head_dim, rot}};
}

PlanKey softmax_key(const SoftmaxArgs& a) {
  check_dims("softmax", {{"rows", a.rows}, {"cols", a.cols}});
  return {OpKind::kSoftmax, mode_of(a.mask), a.dtype, {a.rows, a.cols, 0, 0, 0}};
}

PlanKey swiglu_key(const SwigluArgs& a) {
  check_dims("swiglu", {{"m", a.m}, {"i", a.i}});
  const bool split = a.x == nullptr;
  if (!split && (a.gate != nullptr || a.up != nullptr))
    throw Error(ErrorKind::kBadInput,
                "swiglu: give x (the fused form) or gate and up (the split form), not both");
  return {OpKind::kSwiglu, static_cast<uint8_t>(split ? 1 : 0), a.dtype, {a.m, a.i, 0, 0, 0}};
}

PlanKey decode_key(const DecodeAttentionArgs& a) {
  const bool paged = a.block_table != nullptr;
  const int64_t seq_max = paged ? a.seq : (a.seq_max != 0 ? a.seq_max : a.seq);  // paged: unused
  check_dims("decode_attention", {{"batch", a.batch},
                                  {"heads_q", a.heads_q},
                                  {"heads_kv", a.heads_kv},
                                  {"seq", a.seq},
                                  {"seq_max", seq_max},
                                  {"head_dim", a.head_dim}});
  if (a.seq > seq_max) {
    throw Error(
        ErrorKind::kBadInput,
        fmt::format("decode_attention: context seq={} is past the KV cache (seq_max={})", a.seq, seq_max));
  }
  if (a.heads_q % a.heads_kv != 0) {
    throw Error(
        ErrorKind::kBadInput,
        fmt::format("decode_attention: heads_q={} is not a multiple of heads_kv={}", a.heads_q, a.heads_kv));
  }
  return {OpKind::kDecodeAttention,
          static_cast<uint8_t>(paged ? 1 : 0),
          a.dtype,
          {a.batch, a.heads_q, a.heads_kv, a.seq, a.head_dim},
          seq_max,
          static_cast<uint8_t>(a.context_lens != nullptr ? runtime::detail::kContextLens : 0)};
}

PlanKey fp8_key(const Fp8GemmArgs& a) {
  check_dims("fp8_gemm", {{"m", a.m}, {"n", a.n}, {"k", a.k}});
  if (a.scaling != Fp8Scaling::kPerTensor && a.scaling != Fp8Scaling::kRowCol)
    throw Error(ErrorKind::kBadInput,
                fmt::format("fp8_gemm: unknown scaling {}", static_cast<int>(a.scaling)));
  return {OpKind::kFp8Gemm,
          static_cast<uint8_t>(a.scaling == Fp8Scaling::kRowCol ? 1 : 0),
          DType::kFP8E4M3,
          {a.m, a.n, a.k, 0, 0}};
}

}  // namespace

// ---- rmsnorm

PlanInfo Runtime::prepare(const RmsNormArgs& args) {
  return impl_->plan(rmsnorm_key(args), std::nullopt).info;
}

void Runtime::rmsnorm(const RmsNormArgs& a, Stream stream) {
  const PlanKey key = rmsnorm_key(a);
  const std::size_t e = element_bytes(a.dtype);
  check_pointers("rmsnorm", {{"x", a.x, e}, {"w", a.w, e}, {"y", a.y, e}});
  if (a.residual != nullptr)
    check_pointers("rmsnorm", {{"residual", a.residual, e}, {"residual_out", a.residual_out, e}});
  check_eps("rmsnorm", a.eps);
  const void* slots[] = {a.x, a.residual, a.w, a.y, a.residual != nullptr ? a.residual_out : nullptr};
  const double scalars[] = {a.eps};
  impl_->run(key, slots, scalars, nullptr, 0, stream);
}

// ---- rmsnorm_rope

PlanInfo Runtime::prepare(const RmsNormRopeArgs& args) {
  return impl_->plan(rope_key(args), std::nullopt).info;
}

void Runtime::rmsnorm_rope(const RmsNormRopeArgs& a, Stream stream) {
  const PlanKey key = rope_key(a);
  check_dims("rmsnorm_rope", {{"max_pos", a.max_pos}});
  const std::size_t e = element_bytes(a.dtype);
  check_pointers("rmsnorm_rope", {{"q", a.q, e},
                                  {"k", a.k, e},
                                  {"q_weight", a.q_weight, e},
                                  {"k_weight", a.k_weight, e},
                                  {"cos_sin", a.cos_sin, kWord},
                                  {"positions", a.positions, kWord},
                                  {"q_out", a.q_out, e},
                                  {"k_out", a.k_out, e}});
  check_eps("rmsnorm_rope", a.eps);
  const void* slots[] = {a.q, a.k, a.q_weight, a.k_weight, a.cos_sin, a.positions, a.q_out, a.k_out};
  const double scalars[] = {static_cast<double>(a.max_pos), a.eps};
  impl_->run(key, slots, scalars, nullptr, 0, stream);
}

// ---- rope_append

PlanInfo Runtime::prepare(const RopeAppendArgs& args) {
  return impl_->plan(rope_append_key(args), std::nullopt).info;
}

void Runtime::rope_append(const RopeAppendArgs& a, Stream stream) {
  const PlanKey key = rope_append_key(a);
  const bool paged = a.block_table != nullptr;
  check_dims("rope_append",
             {{"seq_tokens", a.seq_tokens}, {"cache_rows", a.cache_rows}, {"max_pos", a.max_pos}});
  if (paged) check_dims("rope_append", {{"max_blocks", a.max_blocks}, {"num_blocks", a.num_blocks}});
  const std::size_t e = element_bytes(a.dtype);
  check_pointers("rope_append", {{"q", a.q, e},
                                 {"k", a.k, e},
                                 {"v", a.v, e},
                                 {"cos_sin", a.cos_sin, kWord},
                                 {"positions", a.positions, kWord},
                                 {"q_out", a.q_out, e},
                                 {"k_cache", a.k_cache, e},
                                 {"v_cache", a.v_cache, e}});
  const bool norm = a.q_weight != nullptr;
  if (norm) {
    check_pointers("rope_append", {{"q_weight", a.q_weight, e}, {"k_weight", a.k_weight, e}});
    check_eps("rope_append", a.eps);
  }
  if (paged) check_pointers("rope_append", {{"block_table", a.block_table, kWord}});
  const void* slots[] = {a.q,         a.k,           a.v,     a.q_weight, a.k_weight, a.cos_sin,
                         a.positions, a.block_table, a.q_out, a.k_cache,  a.v_cache};
  const double scalars[] = {static_cast<double>(a.seq_tokens),
                            static_cast<double>(a.cache_rows),
                            static_cast<double>(paged ? a.max_blocks : 1),
                            static_cast<double>(paged ? a.num_blocks : 1),
                            static_cast<double>(a.max_pos),
                            norm ? a.eps : 1e-6};
  impl_->run(key, slots, scalars, nullptr, 0, stream);
}

// ---- softmax

PlanInfo Runtime::prepare(const SoftmaxArgs& args) {
  return impl_->plan(softmax_key(args), std::nullopt).info;
}

void Runtime::softmax(const SoftmaxArgs& a, Stream stream) {
  const PlanKey key = softmax_key(a);
  const std::size_t e = element_bytes(a.dtype);
  check_pointers("softmax", {{"x", a.x, e}, {"y", a.y, e}});
  const bool padding = a.mask == SoftmaxMask::kPadding;
  if (padding) check_pointers("softmax", {{"lengths (kPadding)", a.lengths, kWord}});
  if (!std::isfinite(a.scale))
    throw Error(ErrorKind::kBadInput, fmt::format("softmax: scale={} is not finite", a.scale));
  const void* slots[] = {a.x, a.y, padding ? a.lengths : nullptr};
  const double scalars[] = {a.scale};
  impl_->run(key, slots, scalars, a.workspace.ptr, a.workspace.bytes, stream);
}

// ---- swiglu

PlanInfo Runtime::prepare(const SwigluArgs& args) { return impl_->plan(swiglu_key(args), std::nullopt).info; }

void Runtime::swiglu(const SwigluArgs& a, Stream stream) {
  const PlanKey key = swiglu_key(a);
  const std::size_t e = element_bytes(a.dtype);
  if (key.mode == 0) {
    check_pointers("swiglu", {{"x", a.x, e}, {"out", a.out, e}});
  } else {
    check_pointers("swiglu", {{"gate", a.gate, e}, {"up", a.up, e}, {"out", a.out, e}});
  }
  const void* slots[] = {a.x, key.mode == 0 ? nullptr : a.gate, key.mode == 0 ? nullptr : a.up, a.out};
  impl_->run(key, slots, {}, nullptr, 0, stream);
}

// ---- decode_attention

PlanInfo Runtime::prepare(const DecodeAttentionArgs& args) {
  return impl_->plan(decode_key(args), std::nullopt).info;
}

void Runtime::decode_attention(const DecodeAttentionArgs& a, Stream stream) {
  const PlanKey key = decode_key(a);
  const std::size_t e = element_bytes(a.dtype);
  check_pointers("decode_attention", {{"q", a.q, e}, {"k", a.k, e}, {"v", a.v, e}, {"o", a.o, e}});
  if (a.context_lens != nullptr)
    check_pointers("decode_attention", {{"context_lens", a.context_lens, kWord}});
  if (!std::isfinite(a.scale))
    throw Error(ErrorKind::kBadInput, fmt::format("decode_attention: scale={} is not finite", a.scale));
  const double s = a.scale != 0.0f ? a.scale : 1.0 / std::sqrt(static_cast<double>(a.head_dim));
  const bool paged = a.block_table != nullptr;
  if (paged) {
    check_pointers("decode_attention", {{"block_table", a.block_table, kWord}});
    check_dims("decode_attention",
               {{"block_size", a.block_size}, {"max_blocks", a.max_blocks}, {"num_blocks", a.num_blocks}});
    if (a.block_size % 16 != 0)
      throw Error(ErrorKind::kBadInput,
                  fmt::format("decode_attention: block_size={} is not a multiple of 16", a.block_size));
    if (a.max_blocks * a.block_size < a.seq)
      throw Error(ErrorKind::kBadInput,
                  fmt::format("decode_attention: max_blocks={} blocks of {} keys do not "
                              "hold seq={}",
                              a.max_blocks, a.block_size, a.seq));
  }
  const void* slots[] = {a.q, a.k, a.v, a.o, a.context_lens, a.block_table};
  const double scalars[] = {s, static_cast<double>(paged ? a.block_size : 0),
                            static_cast<double>(paged ? a.max_blocks : 0),
                            static_cast<double>(paged ? a.num_blocks : 0)};
  impl_->run(key, slots, scalars, a.workspace.ptr, a.workspace.bytes, stream);
}

// ---- fp8_gemm

PlanInfo Runtime::prepare(const Fp8GemmArgs& args) { return impl_->plan(fp8_key(args), std::nullopt).info; }

void Runtime::fp8_gemm(const Fp8GemmArgs& a, Stream stream) {
  const PlanKey key = fp8_key(a);
  constexpr std::size_t kBf16 = 2;  // C's element
  check_pointers("fp8_gemm", {{"a", a.a, 1},
                              {"b", a.b, 1},
                              {"a_scale", a.a_scale, kWord},
                              {"b_scale", a.b_scale, kWord},
                              {"c", a.c, kBf16}});
  const void* slots[] = {a.a, a.b, a.a_scale, a.b_scale, a.c};
  impl_->run(key, slots, {}, a.workspace.ptr, a.workspace.bytes, stream);
}

}  // namespace ktune
