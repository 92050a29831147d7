#pragma once
/// Host-side spec of decode_attention's cluster template (decode_attention_mma_cluster.cu, sm_90):
/// the tensor-core template's blocks, with the SPLIT_K splits of a (sequence, G heads) in one thread
/// block cluster that merges them before it exits. One launch, no workspace, deterministic.
/// Launch: ktune_decode_attention_mma_cluster<D,G,KEYS,WARPS,STAGES,SPLIT_K,T> on grid (SPLIT_K,
/// heads_q / G, batch), cluster (SPLIT_K, 1, 1), 32 * WARPS threads, the mma template's dynamic shared
/// memory.
/// Parameters: those of DecodeAttentionMmaSpec, with SPLIT_K 2 to 16 (past 8, the portable cluster
/// size, the launch sites allow the larger cluster: harness::allow_cluster_size).
/// Name: `decode_attention.bf16.mma_cluster.k<KEYS>.w<WARPS>.s<STAGES>.sk<SPLIT_K>`.

#include "kernel_templates/decode_attention/decode_attention_mma_spec.hpp"

namespace ktune::kernel_templates {

class DecodeAttentionMmaClusterSpec final : public DecodeAttentionMmaSpec {
 public:
  /// The most splits a cluster holds: sm_90's largest (non-portable) thread block cluster.
  static constexpr int64_t kMaxCluster = 16;

  std::string_view variant() const override { return "mma_cluster"; }
  std::string_view source_name() const override { return "decode_attention_mma_cluster.cu"; }
  std::optional<std::string> arch_rejection(std::string_view arch) const override;
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  /// 4 warps, 16-key tiles, 3 stages, 8 splits (the portable cluster): the batch-1 corner it is for.
  Config default_config(const Problem& problem) const override;

 protected:
  std::string main_kernel(const Problem& problem, const Config& config) const override;
  bool merges_splits_in_kernel() const override { return true; }
};

}  // namespace ktune::kernel_templates
