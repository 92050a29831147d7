#pragma once
/// Host-side spec of decode_attention's tensor-core template (decode_attention_mma.cu, sm_80+): the
/// problem, tensors, arguments, grid, workspace, combine, reference and calls of
/// DecodeAttentionSpec, with another main kernel.
/// Launch: ktune_decode_attention_mma<D,G,KEYS,WARPS,STAGES,T> on grid (SPLIT_K, heads_q / G,
/// batch), 32 * WARPS threads, WARPS * STAGES * 2 * KEYS * head_dim * 2 bytes of dynamic shared
/// memory (a ring of K and V tiles a warp).
/// Parameters: KEYS (keys a warp's tile: 16, 32 or 64), WARPS (1, 2, 4, 8), STAGES (ring depth, 2
/// to 8), SPLIT_K (1 to 1024). The shared memory must fit 227 KiB.
/// Name: `decode_attention.bf16[.paged].mma.k<KEYS>.w<WARPS>.s<STAGES>.sk<SPLIT_K>`.

#include "kernel_templates/decode_attention/decode_attention_spec.hpp"

namespace ktune::kernel_templates {

class DecodeAttentionMmaSpec : public DecodeAttentionSpec {
 public:
  static constexpr int64_t kMaxStages = 8;
  /// The largest dynamic shared memory a block may opt into on sm_80 and sm_90.
  static constexpr int64_t kMaxSharedBytes = 227 * 1024;

  std::string_view variant() const override { return "mma"; }
  /// A contiguous cache ("") and a paged one ("paged").
  std::vector<std::string> layouts() const override { return {"", "paged"}; }
  std::vector<std::string> param_names() const override { return {"KEYS", "WARPS", "STAGES", "SPLIT_K"}; }
  std::string_view source_name() const override { return "decode_attention_mma.cu"; }
  std::optional<std::string> arch_rejection(std::string_view arch) const override;
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  /// 4 warps, 16-key tiles, 3 stages (96 KiB: fits every sm_80+ part), SPLIT_K as the splitkv default.
  Config default_config(const Problem& problem) const override;

  /// Dynamic shared memory of a config: the warps' rings of K and V tiles.
  static int64_t shared_bytes(const Problem& problem, const Config& config);

 protected:
  std::string main_kernel(const Problem& problem, const Config& config) const override;
  LaunchDims main_dims(const Problem& problem, const Config& config) const override;
};

}  // namespace ktune::kernel_templates
