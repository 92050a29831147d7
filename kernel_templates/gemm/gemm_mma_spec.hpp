#pragma once
/// The tensor-core template of the `gemm` family (gemm_mma.cu): mma.sync m16n8k16 with ldmatrix, a
/// cp.async pipeline in XOR-swizzled shared memory, grouped block order, split-K (deterministic or
/// atomic), optional bias and SiLU epilogue. f16 and bf16 only (f32 problems go to "tiled").
///
/// Parameters (template-argument order): BLOCK_M, BLOCK_N, BLOCK_K, WARPS_M, WARPS_N, STAGES,
/// SPLIT_K, SPLIT_K_MODE (0 deterministic: f32 slices + ordered reduction; 1 atomic: f32 atomics
/// into a zeroed workspace, then a conversion pass; needs SPLIT_K > 1), SWIZZLE (block-rows walked
/// together, 1 = row-major order). Rules: BLOCK_M % (16 WARPS_M) == 0, BLOCK_N % (16 WARPS_N) == 0,
/// BLOCK_N a power of two >= 16, BLOCK_K a power of two in [16, 128], WARPS_M * WARPS_N <= 16,
/// 2 <= STAGES <= 6, shared memory STAGES (BLOCK_M + BLOCK_N) BLOCK_K 2 bytes <= 227 KiB.
///
/// Every form (GemmForm, gemm_spec.hpp): "nt", "nn", optionally "+bias" then "+silu".
///
/// Name: `gemm.<dtype>.<layout>.mma.<BM>x<BN>x<BK>.w<WM>x<WN>.s<STAGES>.sk<SPLIT_K>.a<MODE>.g<SWIZZLE>`,
/// e.g. `gemm.bf16.nt.mma.128x256x32.w2x4.s3.sk1.a0.g8`.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_templates/gemm/gemm_spec.hpp"

namespace ktune::kernel_templates {

class MmaGemmSpec : public GemmSpecBase {
 public:
  std::string_view variant() const override { return "mma"; }
  std::vector<DType> dtypes() const override { return {DType::kF16, DType::kBF16}; }
  std::vector<std::string> param_names() const override;
  std::string_view source_name() const override { return "gemm_mma.cu"; }
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  CompileSpec compile_spec(const Problem& problem, const Config& config) const override;
  /// SPLIT_K 1: one launch. Deterministic split-K: the GEMM into "workspace" [SPLIT_K*M*N] f32, then
  /// the ordered reduction. Atomic: zero "workspace" [M*N], the GEMM, then the conversion. Launches
  /// with more than 48 KiB of dynamic shared memory need the opt-in attribute (LaunchDims).
  LaunchPlan launch_plan(const Problem& problem, const Config& config) const override;
  /// A, B 16-byte aligned with K (and N for an "nn" B) and their row strides multiples of 8 for
  /// the cp.async path, C 4-byte aligned with an even row stride for paired stores; otherwise element
  /// paths. Nothing is required.
  std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const override;
  /// 64x128x32, 2x2 warps, 3 stages, no split, group 8: 36 KiB of shared memory (no opt-in needed).
  Config default_config(const Problem& problem) const override;

  /// Dynamic shared memory of a config: STAGES * (BLOCK_M + BLOCK_N) * BLOCK_K * 2 bytes (unpadded).
  static int64_t shared_bytes(const Config& config);

 protected:
  /// What the mma templates share: the layout and epilogue form, the problem, f16/bf16, every
  /// parameter present and positive, and the tile rules (warps tile the block, BLOCK_N and BLOCK_K
  /// powers of two, at most 16 warps, 2..6 stages, SPLIT_K within gridDim.z).
  std::optional<std::string> tile_rejection(const Problem& problem, const Config& config) const;
};

}  // namespace ktune::kernel_templates
