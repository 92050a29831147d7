#include "kernel_templates/spec_registry.hpp"

#include <algorithm>
#include <memory>

#include "kernel_templates/decode_attention/decode_attention_mma_cluster_spec.hpp"
#include "kernel_templates/decode_attention/decode_attention_mma_spec.hpp"
#include "kernel_templates/decode_attention/decode_attention_spec.hpp"
#include "kernel_templates/fp8_gemm/fp8_gemm_spec.hpp"
#include "kernel_templates/fp8_gemm/fp8_gemm_wgmma_spec.hpp"
#include "kernel_templates/gemm/gemm_mma_cluster_spec.hpp"
#include "kernel_templates/gemm/gemm_mma_spec.hpp"
#include "kernel_templates/gemm/gemm_spec.hpp"
#include "kernel_templates/gemm/gemm_wgmma_spec.hpp"
#include "kernel_templates/gemm/gemv_spec.hpp"
#include "kernel_templates/rmsnorm/rmsnorm_bulk_spec.hpp"
#include "kernel_templates/rmsnorm/rmsnorm_spec.hpp"
#include "kernel_templates/rmsnorm_rope/rmsnorm_rope_bulk_spec.hpp"
#include "kernel_templates/rmsnorm_rope/rmsnorm_rope_spec.hpp"
#include "kernel_templates/rope_append/rope_append_spec.hpp"
#include "kernel_templates/softmax/softmax_cluster_spec.hpp"
#include "kernel_templates/softmax/softmax_spec.hpp"
#include "kernel_templates/swiglu/swiglu_spec.hpp"
#include "kernel_templates/user_kernel/user_kernels.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

/// Every built-in template, once: a new template is its spec's files plus a row here.
std::vector<std::unique_ptr<const KernelSpec>> make_specs() {
  std::vector<std::unique_ptr<const KernelSpec>> all;
  all.push_back(std::make_unique<TiledGemmSpec>());
  all.push_back(std::make_unique<GemvSpec>());
  all.push_back(std::make_unique<MmaGemmSpec>());
  all.push_back(std::make_unique<MmaClusterGemmSpec>());
  all.push_back(std::make_unique<WgmmaGemmSpec>());
  all.push_back(std::make_unique<WgmmaGemmSpec>(WgmmaGemmSpec::Pipeline::kTma));
  all.push_back(std::make_unique<RmsNormSpec>());
  all.push_back(std::make_unique<RmsNormBulkSpec>());
  all.push_back(std::make_unique<RmsNormRopeSpec>());
  all.push_back(std::make_unique<RmsNormRopeBulkSpec>());
  all.push_back(std::make_unique<RopeAppendSpec>());
  all.push_back(std::make_unique<SoftmaxSpec>());
  all.push_back(std::make_unique<SoftmaxClusterSpec>());
  all.push_back(std::make_unique<SwigluSpec>());
  all.push_back(std::make_unique<Fp8GemmSpec>());
  all.push_back(std::make_unique<Fp8GemmWgmmaSpec>());
  all.push_back(std::make_unique<DecodeAttentionSpec>());
  all.push_back(std::make_unique<DecodeAttentionMmaSpec>());
  all.push_back(std::make_unique<DecodeAttentionMmaClusterSpec>());
  return all;
}

const std::vector<const KernelSpec*>& all_specs() {
  static const std::vector<std::unique_ptr<const KernelSpec>> kOwned = make_specs();
  static const std::vector<const KernelSpec*> kAll = [] {
    std::vector<const KernelSpec*> out;
    for (const auto& s : kOwned) out.push_back(s.get());
    return out;
  }();
  return kAll;
}

constexpr std::string_view kGemmReferences[] = {"gemm_reference.cu", "gemm_epilogue_reference.cu"};
constexpr std::string_view kRmsNormReferences[] = {"rmsnorm_reference.cu"};
constexpr std::string_view kRmsNormRopeReferences[] = {"rmsnorm_rope_reference.cu"};
constexpr std::string_view kRopeAppendReferences[] = {"rope_append_reference.cu"};
constexpr std::string_view kSoftmaxReferences[] = {"softmax_reference.cu"};
constexpr std::string_view kSwigluReferences[] = {"swiglu_reference.cu"};
constexpr std::string_view kDecodeAttentionReferences[] = {"decode_attention_reference.cu"};
constexpr std::string_view kFp8GemmReferences[] = {"fp8_gemm_reference.cu"};

}  // namespace

std::span<const FamilyInfo> template_families() {
  static constexpr FamilyInfo kFamilies[] = {
      {"gemm", "C[m,n] = A[m,k] * B[k,n]", "nt", kGemmReferences, GemmSpecBase::kDispatch},
      {"rmsnorm", "RMS normalisation of each row", "", kRmsNormReferences, RmsNormSpec::kDispatch},
      {"rmsnorm_rope", "fused RMS normalisation and rotary position embedding of Q and K", "neox",
       kRmsNormRopeReferences, RmsNormRopeSpec::kDispatch},
      {"rope_append", "rotary embedding of Q and K (optionally after their RMSNorm) with the KV-cache append",
       "neox", kRopeAppendReferences, RopeAppendSpec::kDispatch},
      {"softmax", "softmax of each row", "", kSoftmaxReferences, SoftmaxSpec::kDispatch},
      {"swiglu", "SwiGLU activation: silu(gate) * up", "fused", kSwigluReferences, SwigluSpec::kDispatch},
      {"decode_attention", "single-token attention over a KV cache (decode step)", "",
       kDecodeAttentionReferences, DecodeAttentionSpec::kDispatch},
      {"fp8_gemm", "C[m,n] (bf16) = scale * A[m,k] * B[n,k]^T, A and B e4m3", "nt", kFp8GemmReferences,
       Fp8GemmSpec::kDispatch},
  };
  return kFamilies;
}

const FamilyInfo* find_family(std::string_view kernel) {
  for (const FamilyInfo& f : template_families()) {
    if (f.name == kernel) return &f;
  }
  return nullptr;
}

std::vector<const KernelSpec*> specs_of(std::string_view kernel) {
  if (const UserKernelSpec* user = find_user_kernel(kernel)) return {user};
  std::vector<const KernelSpec*> out;
  for (const KernelSpec* s : all_specs()) {
    if (s->kernel() == kernel) out.push_back(s);
  }
  return out;
}

const KernelSpec& find_spec(std::string_view kernel, std::string_view variant) {
  std::string known;
  for (const KernelSpec* s : specs_of(kernel)) {
    if (s->variant() == variant) return *s;
    known += (known.empty() ? "" : ", ") + std::string(s->variant());
  }
  throw Error(ErrorKind::kBadInput, "kernel '" + std::string(kernel) + "' has no variant '" +
                                        std::string(variant) +
                                        "' (known: " + (known.empty() ? "none" : known) + ")");
}

std::vector<std::string> kernel_source_files(std::string_view kernel) {
  // A user kernel's identity covers its description as well as its source.
  if (find_user_kernel(kernel) != nullptr)
    return {std::string(kernel) + ".cu", std::string(kernel) + ".toml"};
  std::vector<std::string> out;
  for (const KernelSpec* s : specs_of(kernel)) out.emplace_back(s->source_name());
  if (const FamilyInfo* f = find_family(kernel))
    for (std::string_view r : f->references) out.emplace_back(r);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ktune::kernel_templates
