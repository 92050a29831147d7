#include "kernel_templates/kernel_catalog.hpp"

#include <algorithm>
#include <map>

#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

const std::vector<KernelDescriptor>& table() {
  static const std::vector<KernelDescriptor> kTable = {
      {"gemm",
       {"m", "n", "k"},
       {"f32", "f16", "bf16"},
       "C[m,n] = A[m,k] * B[k,n]",
       "nt",
       // The operand layout, then the optional epilogues (GemmForm, gemm/gemm_mma_spec.hpp).
       {"nt", "nn", "nt+bias", "nn+bias", "nt+silu", "nn+silu", "nt+bias+silu", "nn+bias+silu"}},
      {"rmsnorm",
       {"rows", "hidden"},
       {"f32", "f16", "bf16"},
       "RMS normalisation of each row",
       "",
       {"", "residual"}},
      {"rmsnorm_rope",
       {"tokens", "heads_q", "heads_kv", "head_dim"},
       {"f32", "f16", "bf16"},
       "fused RMS normalisation and rotary position embedding of Q and K",
       "neox",
       {"neox", "gptj"}},
      {"softmax",
       {"rows", "cols"},
       {"f32", "f16", "bf16"},
       "softmax of each row",
       "",
       {"", "causal", "padding"}},
      {"swiglu",
       {"m", "i"},
       {"f32", "f16", "bf16"},
       "SwiGLU activation: silu(gate) * up",
       "fused",
       {"fused", "split"}},
      {"decode_attention",
       {"batch", "heads_q", "heads_kv", "seq", "head_dim"},
       {"bf16"},
       "single-token attention over a KV cache (decode step)",
       "",
       {""}},
      {"fp8_gemm",
       {"m", "n", "k"},
       {"fp8e4m3"},
       "C[m,n] (bf16) = scale * A[m,k] * B[n,k]^T, A and B e4m3",
       "nt",
       // Per-tensor scales, or per row of A x per column of B (kernel_templates/fp8_gemm/fp8_gemm_spec.hpp).
       {"nt", "nt+rowcol"}},
      {"copy", {"n"}, {"f32", "f16", "bf16"}, "device-to-device copy (bandwidth ceiling)", "", {""}},
  };
  return kTable;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += ", ";
    out += p;
  }
  return out;
}

}  // namespace

bool KernelDescriptor::supports(std::string_view dtype) const {
  return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

void KernelDescriptor::require_dtype(std::string_view dtype) const {
  if (!supports(dtype)) {
    throw Error(ErrorKind::kBadInput, "kernel '" + name + "' does not support dtype '" + std::string(dtype) +
                                          "' (supported: " + join(dtypes) + ")");
  }
}

bool KernelDescriptor::supports_layout(std::string_view layout) const {
  return std::find(layouts.begin(), layouts.end(), layout) != layouts.end();
}

void KernelDescriptor::require_layout(std::string_view layout) const {
  if (!supports_layout(layout)) {
    std::vector<std::string> shown;
    for (const auto& l : layouts) shown.push_back(l.empty() ? "\"\"" : l);
    throw Error(ErrorKind::kBadInput, "kernel '" + name + "' does not accept layout '" + std::string(layout) +
                                          "' (accepted: " + join(shown) + ")");
  }
}

std::string KernelDescriptor::example_shape() const {
  // Typical LLM-decode sizes, only to show the form of the text.
  static const std::map<std::string, std::string, std::less<>> kExamples = {
      {"m", "16"},      {"n", "4096"},     {"k", "4096"},     {"rows", "16"},      {"hidden", "4096"},
      {"tokens", "16"}, {"heads_q", "32"}, {"heads_kv", "8"}, {"head_dim", "128"}, {"cols", "32000"},
      {"i", "14336"},   {"batch", "8"},    {"seq", "4096"},
  };
  std::string out;
  for (const auto& d : dims) {
    if (!out.empty()) out += ",";
    auto it = kExamples.find(d);
    out += d + "=" + (it == kExamples.end() ? std::string("1024") : it->second);
  }
  return out;
}

std::span<const KernelDescriptor> kernel_catalog() { return table(); }

const KernelDescriptor* find_kernel(std::string_view name) {
  for (const auto& k : table()) {
    if (k.name == name) return &k;
  }
  throw Error(ErrorKind::kBadInput,
              "unknown kernel '" + std::string(name) + "' (known kernels: " + known_kernel_names() + ")");
}

bool is_known_kernel(std::string_view name) {
  return std::any_of(table().begin(), table().end(),
                     [&](const KernelDescriptor& k) { return k.name == name; });
}

std::string known_kernel_names() {
  std::vector<std::string> names;
  for (const auto& k : table()) names.push_back(k.name);
  return join(names);
}

}  // namespace ktune::kernel_templates
