#pragma once
/// The cluster split-K variant of the `gemm` family's tensor-core template (gemm_mma_cluster.cu,
/// sm_90): the mma template's main loop, K split over the SPLIT_K blocks of one thread block
/// cluster and reduced through distributed shared memory in a fixed order: one launch, no
/// workspace, deterministic. For the small GEMMs where a tile grid leaves SMs idle and a separate
/// reduction launch costs as much as the split gains (M 8..512, short K or narrow N).
///
/// Parameters: BLOCK_M, BLOCK_N, BLOCK_K, WARPS_M, WARPS_N, STAGES, SPLIT_K, SWIZZLE with the mma
/// template's rules, plus: 2 <= SPLIT_K <= 8 (the portable cluster size) dividing BLOCK_M BLOCK_N / 4,
/// and the larger of the pipeline and the f32 partial tile BLOCK_M (BLOCK_N + 8) 4 bytes in shared
/// memory. Layouts and epilogues as the mma template ("nt", "nn", "+bias", "+silu").
///
/// Name: `gemm.<dtype>.<layout>.mma_cluster.<BM>x<BN>x<BK>.w<WM>x<WN>.s<STAGES>.sk<SPLIT_K>.g<SWIZZLE>`,
/// e.g. `gemm.bf16.nt.mma_cluster.16x64x128.w1x4.s4.sk4.g1`.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_templates/gemm/gemm_mma_spec.hpp"

namespace ktune::kernel_templates {

class MmaClusterGemmSpec final : public MmaGemmSpec {
 public:
  std::string_view variant() const override { return "mma_cluster"; }
  std::vector<std::string> param_names() const override;
  std::string_view source_name() const override { return "gemm_mma_cluster.cu"; }
  /// Thread block clusters: sm_90 and later.
  std::optional<std::string> arch_rejection(std::string_view arch) const override;
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  CompileSpec compile_spec(const Problem& problem, const Config& config) const override;
  /// One launch: grid (tiles, 1, SPLIT_K), no workspace tensor.
  LaunchPlan launch_plan(const Problem& problem, const Config& config) const override;
  /// As mma for A and B; C stored 8 bytes at a time when 8-byte aligned with ldc % 4 == 0, else
  /// element by element. Nothing is required.
  std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const override;
  /// 16x64x128, 1x4 warps, 4 stages, SPLIT_K 4, group 1: a decode-size tile.
  Config default_config(const Problem& problem) const override;

  /// Dynamic shared memory: the larger of the pipeline's STAGES (BLOCK_M + BLOCK_N) BLOCK_K 2 bytes
  /// and the partial tile's BLOCK_M (BLOCK_N + 8) 4 bytes.
  static int64_t cluster_shared_bytes(const Config& config);
};

}  // namespace ktune::kernel_templates
