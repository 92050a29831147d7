#include "runtime/detail/op_binding.hpp"

#include <optional>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "kernel_templates/decode_attention/decode_attention_spec.hpp"
#include "kernel_templates/fp8_gemm/fp8_gemm_spec.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::runtime::detail {
namespace {

namespace kt = kernel_templates;

constexpr int64_t kMaxDim = 2147483647;  // the kernels take int32 dimensions

std::vector<std::string> strings(std::span<const std::string_view> views) {
  return {views.begin(), views.end()};
}

kt::DecodeAttentionCall decode_call(const PlanKey& key) {
  return {key.extra, (key.flags & kContextLens) != 0, kt::DecodeAttentionSpec::kDispatchScale};
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

OpBinding derive_binding(OpKind op, const kt::FamilyInfo& family) {
  const kt::DispatchBinding& d = family.dispatch;
  const kt::KernelDescriptor* entry = kt::find_kernel(family.name);
  OpBinding b{op,
              std::string(family.name),
              entry->dims,
              entry->layouts,
              std::string(d.default_variant),
              strings(d.slots),
              {},
              strings(d.preferred_defaults),
              {}};
  for (std::size_t i = 0; i < d.scalars.size(); ++i) {
    const kt::CallScalar& s = d.scalars[i];
    std::size_t arg = ScalarBinding::kByValue;
    if (!s.by_value) {
      const std::optional<std::size_t> at = kt::signature_index(d.signature, s.name);
      if (!at) {
        throw Error(
            ErrorKind::kRuntime,
            fmt::format("{}: the dispatch binding's call-time scalar '{}' is not one parameter of the "
                        "kernel's signature ({})",
                        family.name, s.name,
                        d.signature.empty() ? "none" : fmt::format("{}", fmt::join(d.signature, ", "))));
      }
      arg = *at;
    }
    b.scalars.push_back({ScalarBinding::kEveryLaunch, arg, s.kind, s.spec_value, i});
  }
  for (std::size_t i = 0; i < d.row_strides.size(); ++i)
    b.row_strides.push_back({std::string(d.row_strides[i]), d.scalars.size() + i});
  return b;
}

const OpBinding& binding_of(OpKind op) {
  static const std::vector<OpBinding> kTable = [] {
    std::vector<OpBinding> t;
    for (OpKind o : kAllOps) {
      const kt::FamilyInfo* family = kt::find_family(kernel_of(o));
      if (family == nullptr)
        throw Error(ErrorKind::kRuntime, fmt::format("no kernel family '{}'", kernel_of(o)));
      t.push_back(derive_binding(o, *family));
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
