#pragma once
/// The GEMV / skinny template of the `gemm` family (gemm_gemv.cu): M <= 16, B as [N,K] ("nt", the
/// nn.Linear weight layout) only, with or without the epilogue (+bias, +silu, +bias+silu); "nn"
/// skinny problems go to the tiled template with a small BLOCK_M and SPLIT_K. Parameters: BLOCK_K (k elements
/// a warp reads per row per step: a multiple of 32 lanes x 16 bytes), SPLIT_K, WARPS, ROWS_PER_BLOCK (weight
/// rows per block). The template also takes MT, M rounded up to a power of two, derived from the problem.
/// Name: `gemm.<dtype>.<form>.gemv.k<BLOCK_K>.sk<SPLIT_K>.w<WARPS>.r<ROWS_PER_BLOCK>`.

#include "kernel_templates/gemm/gemm_spec.hpp"

namespace ktune::kernel_templates {

class GemvSpec final : public GemmSpecBase {
 public:
  /// The largest M the template serves.
  static constexpr int64_t kMaxM = 16;

  std::string_view variant() const override { return "gemv"; }
  std::vector<std::string> layouts() const override { return {"nt", "nt+bias", "nt+silu", "nt+bias+silu"}; }
  std::vector<std::string> param_names() const override;
  std::string_view source_name() const override { return "gemm_gemv.cu"; }
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  CompileSpec compile_spec(const Problem& problem, const Config& config) const override;
  LaunchPlan launch_plan(const Problem& problem, const Config& config) const override;
  /// A and B 16-byte aligned with K*sizeof(T) % 16 == 0 for the vector path; otherwise the kernel
  /// takes its scalar path (correct, slower). Nothing is required.
  std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const override;
  /// BLOCK_K = 32 lanes x 16 bytes, SPLIT_K 1, 4 warps, 2 rows per block.
  Config default_config(const Problem& problem) const override;

  /// M rounded up to a power of two (the template's MT).
  static int64_t m_tile(int64_t m);
};

}  // namespace ktune::kernel_templates
