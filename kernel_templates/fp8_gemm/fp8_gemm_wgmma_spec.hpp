#pragma once
/// Host-side spec of `fp8_gemm`'s wgmma variant (fp8_gemm_wgmma.cu, sm_90a): the same problem,
/// tensors, scales, work and reference as the mma variant (fp8_gemm_spec.hpp), computed with
/// wgmma.mma_async m64nNk32 e4m3 at fp8 tensor-core rate from TMA-loaded, 128-byte-swizzled stages.
///
/// Parameters (template-argument order): BLOCK_M (64 or 128: consumer warpgroups of 64 rows),
/// BLOCK_N (64, 128 or 256: the wgmma N), BLOCK_K (128: one swizzled row of e4m3), STAGES (2..8,
/// within 227 KiB), SWIZZLE (block-rows walked together). No split-K. A block has BLOCK_M / 64 + 1
/// warpgroups (the last one's first thread issues the TMA loads).
/// Needs: A and B 16-byte aligned (required, tensor maps), K % 16 == 0 (the problem's rule).
///
/// Name: `fp8_gemm.fp8e4m3.<layout>.wgmma_tma.<BM>x<BN>x<BK>.s<STAGES>.g<SWIZZLE>`.

#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates {

class Fp8GemmWgmmaSpec final : public KernelSpec {
 public:
  static constexpr int64_t kBlockK = 128;  ///< bytes = e4m3 values of one 128-byte swizzled row

  std::string_view kernel() const override { return "fp8_gemm"; }
  std::string_view variant() const override { return "wgmma_tma"; }
  std::vector<std::string> dims() const override { return {"m", "n", "k"}; }
  std::vector<DType> dtypes() const override { return {DType::kFP8E4M3}; }
  std::vector<std::string> layouts() const override;
  std::vector<std::string> param_names() const override {
    return {"BLOCK_M", "BLOCK_N", "BLOCK_K", "STAGES", "SWIZZLE"};
  }
  std::string_view source_name() const override { return "fp8_gemm_wgmma.cu"; }
  /// wgmma.mma_async and TMA: sm_90 / sm_90a only (compiled for sm_90a).
  std::optional<std::string> arch_rejection(std::string_view arch) const override;
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  /// `ktune_fp8_gemm_wgmma<BM,BN,STAGES,SWIZZLE,ROWCOL>`, --gpu-architecture=sm_90a.
  CompileSpec compile_spec(const Problem& problem, const Config& config) const override;
  /// One launch: a block a BM x BN tile (grouped order), tensor maps of A and B as arguments.
  LaunchPlan launch_plan(const Problem& problem, const Config& config) const override;
  WorkCounts work(const Problem& problem) const override;
  /// A and B 16-byte aligned (required: tensor maps), scales 4-byte aligned (required), C 4-byte
  /// aligned for paired stores (else element stores).
  std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const override;
  ReferenceSpec reference(const Problem& problem) const override;
  HostTensors cpu_reference(const Problem& problem, const HostTensors& inputs) const override;
  /// 128x256x128, 4 stages, group 8 (the bf16 TMA GEMM's large-M winner's shape).
  Config default_config(const Problem& problem) const override;

  /// Dynamic shared memory: the stages, 1 KiB to align them to 1024 bytes, the mbarriers.
  static int64_t shared_bytes(const Config& config);
  /// Threads a block: (BLOCK_M / 64 + 1) * 128.
  static int64_t threads(const Config& config);
};

}  // namespace ktune::kernel_templates
