#pragma once
/// The Hopper tensor-core template of the `gemm` family (gemm_wgmma.cu): wgmma.mma_async m64nNk16
/// with both operands in 128-byte-swizzled shared memory, a cp.async pipeline, grouped block order,
/// optional bias and SiLU epilogue, deterministic split-K. f16 and bf16, "nt" and "nn". Compiled for sm_90a
/// only: compile_spec adds
/// `--gpu-architecture=sm_90a` after the target's own option (NVRTC takes the last one).
///
/// Parameters (name order): BLOCK_M (64, 128 or 256: BLOCK_M / 64 warpgroups of 128 threads),
/// BLOCK_N (64, 128 or 256: the wgmma's N), BLOCK_K (64 only: one 128-byte swizzle row of 16-bit
/// elements), STAGES (3..8 shared-memory stages, STAGES - 2 k tiles in flight), SPLIT_K (1..16, at
/// most the k tiles: grid.z splits write f32 slices that the family's reduction sums in order),
/// SWIZZLE (block-rows walked together, 1 = row-major order). Shared memory:
/// STAGES (BLOCK_M + BLOCK_N) 128 bytes + 1 KiB alignment slack <= 227 KiB.
///
/// Layouts as the mma template's: "nt", "nn", optionally "+bias" then "+silu" (GemmForm).
///
/// Architecture: KernelSpec::rejection sees no device, so a caller that knows the target asks
/// arch_rejection() (sm_90 / sm_90a only); the tuner stores the template's configs for any other
/// arch as `skipped` with that reason.
///
/// Name: `gemm.<dtype>.<layout>.wgmma.<BM>x<BN>x<BK>.s<STAGES>.sk<SPLIT_K>.g<SWIZZLE>`,
/// e.g. `gemm.bf16.nt.wgmma.128x256x64.s4.sk1.g8`.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_templates/gemm/gemm_spec.hpp"

namespace ktune::kernel_templates {

class WgmmaGemmSpec final : public GemmSpecBase {
 public:
  /// How the operands reach shared memory.
  enum class Pipeline {
    kCpAsync,  ///< "wgmma" (gemm_wgmma.cu): every warpgroup copies with cp.async; a block barrier a k tile
    kTma,      ///< "wgmma_tma" (gemm_wgmma_tma.cu): one thread issues TMA loads; mbarrier hand-over
  };
  explicit WgmmaGemmSpec(Pipeline pipeline = Pipeline::kCpAsync) : pipeline_(pipeline) {}

  /// Slack the kernel uses to round its shared memory up to a 1024-byte boundary (swizzle atoms).
  static constexpr int64_t kAlignSlackBytes = 1024;

  std::string_view variant() const override { return pipeline_ == Pipeline::kTma ? "wgmma_tma" : "wgmma"; }
  std::vector<DType> dtypes() const override { return {DType::kF16, DType::kBF16}; }
  std::vector<std::string> layouts() const override;
  std::vector<std::string> param_names() const override;
  std::string_view source_name() const override {
    return pipeline_ == Pipeline::kTma ? "gemm_wgmma_tma.cu" : "gemm_wgmma.cu";
  }
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  /// One kernel, options `-std=c++17 --gpu-architecture=sm_90a`.
  CompileSpec compile_spec(const Problem& problem, const Config& config) const override;
  /// The GEMM: grid ceil(M/BM) * ceil(N/BN) x 1 x SPLIT_K, BM / 64 * 128 threads, shared_bytes()
  /// (needs the opt-in above 48 KiB); with SPLIT_K > 1 the reduction (or, with an epilogue, the
  /// finishing pass) follows, reading the f32 workspace [SPLIT_K, M, N].
  LaunchPlan launch_plan(const Problem& problem, const Config& config) const override;
  /// A, B 16-byte aligned with K (and N for an "nn" B) and their row strides multiples of 8 for
  /// the cp.async path, C 4-byte aligned with an even row stride for paired stores; otherwise element
  /// paths. Nothing is required, except by wgmma_tma: A and B (base and row stride) 16-byte
  /// aligned for their tensor maps.
  std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const override;
  /// 128x128x64, 4 stages, no split, group 8: 129 KiB of shared memory.
  Config default_config(const Problem& problem) const override;

  /// rejection_for_arch(arch).
  std::optional<std::string> arch_rejection(std::string_view arch) const override;

  /// Why the template cannot run on `arch` ("sm_80", "sm_90", "sm_90a", ...): everything but sm_90
  /// and sm_90a lacks wgmma (sm_100 dropped it), so only those two are accepted.
  static std::optional<std::string> rejection_for_arch(std::string_view arch);
  /// Dynamic shared memory of a config: STAGES * (BLOCK_M + BLOCK_N) * 128 bytes + 1 KiB.
  int64_t shared_bytes(const Config& config) const;
  /// Threads of a block: BLOCK_M / 64 warpgroups, plus the TMA producer's warpgroup.
  int64_t threads(const Config& config) const;

 private:
  Pipeline pipeline_;
};

}  // namespace ktune::kernel_templates
