#include "runtime/detail/op_binding.hpp"

#include <iterator>
#include <vector>

#include <fmt/format.h>

#include "kernel_templates/decode_attention/decode_attention_spec.hpp"
#include "kernel_templates/fp8_gemm/fp8_gemm_spec.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "kernel_templates/rmsnorm/rmsnorm_spec.hpp"
#include "kernel_templates/rmsnorm_rope/rmsnorm_rope_spec.hpp"
#include "kernel_templates/rope_append/rope_append_spec.hpp"
#include "kernel_templates/softmax/softmax_spec.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::runtime::detail {
namespace {

namespace kt = kernel_templates;
using SK = ScalarBinding::Kind;

constexpr int64_t kMaxDim = 2147483647;  // the kernels take int32 dimensions

// The caller's scalars replace the specs' constants: eps and scale by value (softmax passes its
// scale to both launches of a split row, at different positions), rope's max_pos (an i32 that a
// dimension could equal) by its position in rmsnorm_rope.cu's signature; bind_plan checks that
// the spec's own value sits there.
// The dims and modes are left empty here: binding_of fills them from the kernel catalog, which
// derives them from the templates' specs. A mode's code is its index there (gemm: 2 * epilogue + nn).
const OpBinding kBindings[] = {
    {OpKind::kGemm,
     "gemm",
     {},
     {},
     "tiled",
     // Untuned decode GEMMs (m <= 16) take the GEMV template, f16/bf16 the tensor-core one: the
     // SIMT tiled default ran a Qwen3-0.6B decode step at 19.6 ms against ~1 ms tuned (H200,
     // docs/perf/gemm.md); it stays the default of f32.
     {"a", "b", "c", "bias"},
     {},
     {"gemv", "mma"},
     // lda, ldb, ldc: scalars 0, 1, 2 of a gemm call (the rows of strided views, runtime.cpp).
     {{"a", 0}, {"b", 1}, {"c", 2}}},
    {OpKind::kRmsNorm,
     "rmsnorm",
     {},
     {},
     "rowwise",
     {"x", "residual", "w", "y", "residual_out"},
     {{ScalarBinding::kEveryLaunch, ScalarBinding::kByValue, SK::kF32, kt::RmsNormSpec::kEps, 0}}},
    {OpKind::kRmsNormRope,
     "rmsnorm_rope",
     {},
     {},
     "headwise",
     {"q", "k", "q_weight", "k_weight", "cos_sin", "positions", "q_out", "k_out"},
     {{ScalarBinding::kEveryLaunch, 11, SK::kI32, static_cast<double>(kt::RmsNormRopeSpec::kMaxPos), 0},
      {ScalarBinding::kEveryLaunch, ScalarBinding::kByValue, SK::kF32, kt::RmsNormRopeSpec::kEps, 1}}},
    {OpKind::kSoftmax,
     "softmax",
     {},
     {},
     "rowwise",
     {"x", "y", "lengths"},
     {{ScalarBinding::kEveryLaunch, ScalarBinding::kByValue, SK::kF32, kt::SoftmaxSpec::kScale, 0}}},
    {OpKind::kSwiglu, "swiglu", {}, {}, "elementwise", {"x", "gate", "up", "out"}, {}},
    {OpKind::kDecodeAttention,
     "decode_attention",
     {},
     {},
     "splitkv",
     {"q", "k", "v", "o", "context_lens", "block_table"},
     // The scale by value; the paged geometry (block_size, max_blocks, num_blocks) by position, any
     // value the plan holds there (the tuned plans' geometry depends on seq).
     {{ScalarBinding::kEveryLaunch, ScalarBinding::kByValue, SK::kF32, kDecodeScaleSentinel, 0},
      {ScalarBinding::kEveryLaunch, kt::DecodeAttentionSpec::kArgBlockTable + 1, SK::kI32,
       ScalarBinding::kAnyValue, 1},
      {ScalarBinding::kEveryLaunch, kt::DecodeAttentionSpec::kArgBlockTable + 2, SK::kI32,
       ScalarBinding::kAnyValue, 2},
      {ScalarBinding::kEveryLaunch, kt::DecodeAttentionSpec::kArgBlockTable + 3, SK::kI32,
       ScalarBinding::kAnyValue, 3}}},
    {OpKind::kFp8Gemm, "fp8_gemm", {}, {}, "mma", {"a", "b", "a_scale", "b_scale", "c"}, {}},
    // The call's cache geometry (seq_tokens, cache_rows, max_blocks, num_blocks) and max_pos by
    // their positions in rope_append.cu's signature, eps by value.
    {OpKind::kRopeAppend,
     "rope_append",
     {},
     {},
     "headwise",
     {"q", "k", "v", "q_weight", "k_weight", "cos_sin", "positions", "block_table", "q_out", "k_cache",
      "v_cache"},
     {{ScalarBinding::kEveryLaunch, kt::RopeAppendSpec::kArgSeqTokens, SK::kI32, 1, 0},
      {ScalarBinding::kEveryLaunch, kt::RopeAppendSpec::kArgSeqTokens + 1, SK::kI32, 1, 1},
      {ScalarBinding::kEveryLaunch, kt::RopeAppendSpec::kArgSeqTokens + 2, SK::kI32, 1, 2},
      {ScalarBinding::kEveryLaunch, kt::RopeAppendSpec::kArgSeqTokens + 3, SK::kI32,
       static_cast<double>(kt::RopeAppendSpec::kTunedNumBlocks), 3},
      {ScalarBinding::kEveryLaunch, kt::RopeAppendSpec::kArgMaxPos, SK::kI32,
       static_cast<double>(kt::RopeAppendSpec::kMaxPos), 4},
      {ScalarBinding::kEveryLaunch, ScalarBinding::kByValue, SK::kF32, kt::RopeAppendSpec::kEps, 5}}},
};

kt::DecodeAttentionCall decode_call(const PlanKey& key) {
  return {key.extra, (key.flags & kContextLens) != 0, kDecodeScaleSentinel};
}

}  // namespace

std::size_t PlanKeyHash::operator()(const PlanKey& key) const noexcept {
  uint64_t h = 0x9E3779B97F4A7C15ULL;
  auto mix = [&h](uint64_t v) {
    h = (h ^ v) * 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 31;
  };
  for (int64_t d : key.dims) mix(static_cast<uint64_t>(d));
  mix(static_cast<uint64_t>(key.extra));
  mix((static_cast<uint64_t>(key.flags) << 24) | (static_cast<uint64_t>(key.op) << 16) |
      (static_cast<uint64_t>(key.mode) << 8) | static_cast<uint64_t>(key.dtype));
  return h;
}

const OpBinding& binding_of(OpKind op) {
  // Each operator's dimensions and modes are its catalog entry's, derived from its specs.
  static const std::vector<OpBinding> kTable = [] {
    std::vector<OpBinding> t(std::begin(kBindings), std::end(kBindings));
    for (OpBinding& b : t) {
      const kt::KernelDescriptor* d = kt::find_kernel(b.kernel);
      b.dims = d->dims;
      b.modes = d->layouts;
    }
    return t;
  }();
  for (const OpBinding& b : kTable) {
    if (b.op == op) return b;
  }
  throw Error(ErrorKind::kBadInput, "unknown operator");
}

std::size_t element_bytes(DType dtype) { return size_of(dtype); }

kt::Problem make_problem(const PlanKey& key) {
  const OpBinding& b = binding_of(key.op);
  kt::Problem p;
  for (std::size_t i = 0; i < b.dims.size(); ++i) p.dims.emplace_back(b.dims[i], key.dims[i]);
  p.dtype = key.dtype;
  p.layout = key.mode < b.modes.size() ? b.modes[key.mode] : "?";
  return p;
}

std::string describe(const PlanKey& key) {
  const kt::Problem p = make_problem(key);
  std::string out = fmt::format("{} {} {}{}{}", binding_of(key.op).kernel, p.shape_text(),
                                to_string(key.dtype), p.layout.empty() ? "" : " ", p.layout);
  if (key.op == OpKind::kDecodeAttention) {
    if (key.mode == 0) out += fmt::format(" seq_max={}", key.extra);
    if ((key.flags & kContextLens) != 0) out += " context_lens";
  }
  return out;
}

kt::LaunchPlan launch_plan_for(const PlanKey& key, const kt::KernelSpec& spec, const kt::Problem& problem,
                               const ktune::Config& config) {
  if (key.op == OpKind::kDecodeAttention) {
    const auto* decode = dynamic_cast<const kt::DecodeAttentionSpec*>(&spec);
    if (decode == nullptr)
      throw Error(ErrorKind::kRuntime, "decode_attention's spec is not a DecodeAttentionSpec");
    return decode->launch_plan(problem, config, decode_call(key));
  }
  return spec.launch_plan(problem, config);
}

void check_arch(const PlanKey& key, std::string_view arch) {
  if (key.op != OpKind::kFp8Gemm) return;
  if (auto why = kt::Fp8GemmSpec::rejection_for_arch(arch))
    throw Error(ErrorKind::kBadInput, "fp8_gemm: " + *why);
}

void check_dims(std::string_view op, std::initializer_list<std::pair<const char*, int64_t>> dims) {
  for (const auto& [name, value] : dims) {
    if (value < 1 || value > kMaxDim) {
      throw Error(ErrorKind::kBadInput, fmt::format("{}: {}={} is outside [1, 2^31-1]", op, name, value));
    }
  }
}

std::array<double, 3> gemm_row_strides(const GemmArgs& g) {
  const int64_t b_row = g.layout == Layout::kNN ? g.n : g.k;
  const std::pair<const char*, std::pair<int64_t, int64_t>> strides[] = {
      {"lda", {g.lda, g.k}}, {"ldb", {g.ldb, b_row}}, {"ldc", {g.ldc, g.n}}};
  std::array<double, 3> out{};
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto& [name, v] = strides[i];
    const auto [ld, row] = v;
    if (ld != 0 && ld < row) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("gemm: {}={} is shorter than the row it strides over ({})", name, ld, row));
    }
    if (ld > kMaxDim) throw Error(ErrorKind::kBadInput, fmt::format("gemm: {}={} exceeds 2^31-1", name, ld));
    out[i] = static_cast<double>(ld == 0 ? row : ld);
  }
  return out;
}

void check_pointers(std::string_view op, std::initializer_list<PointerArg> pointers) {
  for (const PointerArg& p : pointers) {
    if (p.ptr == nullptr) throw Error(ErrorKind::kBadInput, fmt::format("{}: {} is null", op, p.name));
    if (reinterpret_cast<uintptr_t>(p.ptr) % p.align != 0) {
      throw Error(ErrorKind::kBadInput, fmt::format("{}: {} at {} is not aligned to its {}-byte elements", op,
                                                    p.name, p.ptr, p.align));
    }
  }
}

const kt::KernelSpec& default_spec(const PlanKey& key, std::string_view arch) {
  const OpBinding& b = binding_of(key.op);
  if (key.mode >= b.modes.size())
    throw Error(ErrorKind::kBadInput, fmt::format("{}: unknown mode {}", b.kernel, key.mode));
  const kt::Problem p = make_problem(key);
  for (const std::string& variant : b.preferred_defaults) {
    const kt::KernelSpec& spec = kt::find_spec(b.kernel, variant);
    if (!spec.arch_rejection(arch) && !spec.rejection(p, spec.default_config(p))) return spec;
  }
  // The binding's default template serves every problem it supports; a mode it lacks falls to the
  // first other template whose default config serves the problem.
  const kt::KernelSpec& first = kt::find_spec(b.kernel, b.default_variant);
  auto why = first.rejection(p, first.default_config(p));
  if (!why) return first;
  for (const kt::KernelSpec* spec : kt::specs_of(b.kernel)) {
    if (spec == &first || spec->arch_rejection(arch)) continue;
    if (!spec->rejection(p, spec->default_config(p))) return *spec;
  }
  throw Error(ErrorKind::kBadInput, fmt::format("{}: {}", describe(key), *why));
}

void check_problem(const PlanKey& key, std::string_view arch) {
  const kt::Problem p = make_problem(key);
  const kt::KernelSpec& spec = default_spec(key, arch);
  if (key.op == OpKind::kDecodeAttention) {
    const auto& decode = dynamic_cast<const kt::DecodeAttentionSpec&>(spec);
    if (auto why = decode.call_rejection(p, decode_call(key)))
      throw Error(ErrorKind::kBadInput, fmt::format("{}: {}", describe(key), *why));
  }
}

}  // namespace ktune::runtime::detail
