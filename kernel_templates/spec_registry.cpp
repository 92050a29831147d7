#include "kernel_templates/spec_registry.hpp"

#include <algorithm>

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

const std::vector<const KernelSpec*>& all_specs() {
  static const TiledGemmSpec kTiled;
  static const GemvSpec kGemv;
  static const MmaGemmSpec kMma;
  static const MmaClusterGemmSpec kMmaCluster;
  static const WgmmaGemmSpec kWgmma;
  static const WgmmaGemmSpec kWgmmaTma(WgmmaGemmSpec::Pipeline::kTma);
  static const RmsNormSpec kRmsNorm;
  static const RmsNormBulkSpec kRmsNormBulk;
  static const RmsNormRopeSpec kRmsNormRope;
  static const RmsNormRopeBulkSpec kRmsNormRopeBulk;
  static const RopeAppendSpec kRopeAppend;
  static const SoftmaxSpec kSoftmax;
  static const SoftmaxClusterSpec kSoftmaxCluster;
  static const SwigluSpec kSwiglu;
  static const Fp8GemmSpec kFp8Gemm;
  static const Fp8GemmWgmmaSpec kFp8GemmWgmma;
  static const DecodeAttentionSpec kDecodeAttention;
  static const DecodeAttentionMmaSpec kDecodeAttentionMma;
  static const DecodeAttentionMmaClusterSpec kDecodeAttentionMmaCluster;
  static const std::vector<const KernelSpec*> kAll = {&kTiled,
                                                      &kGemv,
                                                      &kMma,
                                                      &kMmaCluster,
                                                      &kWgmma,
                                                      &kWgmmaTma,
                                                      &kRmsNorm,
                                                      &kRmsNormBulk,
                                                      &kRmsNormRope,
                                                      &kRmsNormRopeBulk,
                                                      &kRopeAppend,
                                                      &kSoftmax,
                                                      &kSoftmaxCluster,
                                                      &kSwiglu,
                                                      &kFp8Gemm,
                                                      &kFp8GemmWgmma,
                                                      &kDecodeAttention,
                                                      &kDecodeAttentionMma,
                                                      &kDecodeAttentionMmaCluster};
  return kAll;
}

}  // namespace

std::span<const FamilyInfo> template_families() {
  static constexpr FamilyInfo kFamilies[] = {
      {"gemm", "C[m,n] = A[m,k] * B[k,n]", "nt"},
      {"rmsnorm", "RMS normalisation of each row", ""},
      {"rmsnorm_rope", "fused RMS normalisation and rotary position embedding of Q and K", "neox"},
      {"rope_append", "rotary embedding of Q and K (optionally after their RMSNorm) with the KV-cache append",
       "neox"},
      {"softmax", "softmax of each row", ""},
      {"swiglu", "SwiGLU activation: silu(gate) * up", "fused"},
      {"decode_attention", "single-token attention over a KV cache (decode step)", ""},
      {"fp8_gemm", "C[m,n] (bf16) = scale * A[m,k] * B[n,k]^T, A and B e4m3", "nt"},
  };
  return kFamilies;
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
  if (kernel == "gemm") {
    out.emplace_back("gemm_reference.cu");
    out.emplace_back("gemm_epilogue_reference.cu");
  }
  // The operators' GPU references: <kernel>_reference.cu.
  if (kernel == "rmsnorm" || kernel == "rmsnorm_rope" || kernel == "softmax" || kernel == "swiglu" ||
      kernel == "decode_attention" || kernel == "rope_append") {
    out.push_back(std::string(kernel) + "_reference.cu");
  }
  if (kernel == "fp8_gemm") out.emplace_back("fp8_gemm_reference.cu");
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ktune::kernel_templates
