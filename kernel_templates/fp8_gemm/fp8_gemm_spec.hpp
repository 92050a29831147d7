#pragma once
/// The `fp8_gemm` kernel (fp8_gemm.cu): C[M,N] (bf16) = scale * A[M,K] * B[N,K]^T, A and B in e4m3,
/// f32 accumulation on tensor cores (mma.sync m16n8k32 e4m3, sm_89+), the result saturated to the
/// largest finite bf16 instead of inf.
///
/// Problem: dims m, n, k (K a multiple of 16); dtype "fp8e4m3" (the inputs'; C is always bf16);
/// layout (the mode, part of the cache key) "nt" (per-tensor scales: a_scale[1], b_scale[1]) or
/// "nt+rowcol" (a_scale[M] per row of A, b_scale[N] per column of C). B is the nn.Linear weight
/// [N,K]; there is no "nn" (ldmatrix cannot transpose bytes).
///
/// Tensors, by name: "a" [M*K] fp8e4m3, "b" [N*K] fp8e4m3, "a_scale", "b_scale" f32 (1 each, or M
/// and N with "+rowcol"), "c" [M*N] bf16; "workspace" [SPLIT_K*M*N] f32 when SPLIT_K > 1. Scales
/// are read from device memory when the kernel runs (a CUDA graph may capture the launch).
///
/// Parameters (template-argument order): BLOCK_M, BLOCK_N, BLOCK_K (bytes = elements), WARPS_M,
/// WARPS_N, STAGES, SPLIT_K (deterministic: f32 slices + an ordered reduction), SWIZZLE (block-rows
/// walked together). Rules: BLOCK_M % (16 WARPS_M) == 0, BLOCK_N % (16 WARPS_N) == 0, BLOCK_K a power
/// of two in [32, 256], WARPS_M * WARPS_N <= 16, 2 <= STAGES <= 6, STAGES (BLOCK_M + BLOCK_N) BLOCK_K
/// <= 227 KiB.
///
/// Name: `fp8_gemm.fp8e4m3.<layout>.<BM>x<BN>x<BK>.w<WM>x<WN>.s<STAGES>.sk<SPLIT_K>.g<SWIZZLE>`,
/// e.g. `fp8_gemm.fp8e4m3.nt+rowcol.128x128x64.w2x2.s4.sk1.g8`.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_templates/dispatch_binding.hpp"
#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates {

class Fp8GemmSpec final : public KernelSpec {
 public:
  /// K granularity: one 16-byte cp.async moves 16 e4m3 values of a row.
  static constexpr int64_t kKMultiple = 16;
  /// Runtime::fp8_gemm's tensors.
  static constexpr std::string_view kDispatchSlots[] = {"a", "b", "a_scale", "b_scale", "c"};
  /// How Runtime::fp8_gemm binds to the family's templates.
  static constexpr DispatchBinding kDispatch = {.default_variant = "mma", .slots = kDispatchSlots};

  std::string_view kernel() const override { return "fp8_gemm"; }
  std::string_view variant() const override { return "mma"; }
  std::vector<std::string> dims() const override { return {"m", "n", "k"}; }
  std::vector<DType> dtypes() const override { return {DType::kFP8E4M3}; }
  std::vector<std::string> layouts() const override;
  std::vector<std::string> param_names() const override;
  std::string_view source_name() const override { return "fp8_gemm.cu"; }
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  CompileSpec compile_spec(const Problem& problem, const Config& config) const override;
  /// SPLIT_K 1: one launch. SPLIT_K > 1: the GEMM into "workspace", then ktune_fp8_gemm_finish
  /// (sum in split order, scale, saturate). More than 48 KiB of shared memory needs the opt-in.
  LaunchPlan launch_plan(const Problem& problem, const Config& config) const override;
  /// 2 M N K FLOPs; A, B and the scales read once, C (bf16) written once.
  WorkCounts work(const Problem& problem) const override;
  /// A and B 16-byte aligned (required: every load is a 16-byte cp.async), scales 4-byte aligned
  /// (required), C 4-byte aligned for paired stores (else element stores).
  std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const override;
  /// fp8_gemm_reference.cu: e4m3 decoded arithmetically, f32 accumulation, output "c_ref" (f32).
  ReferenceSpec reference(const Problem& problem) const override;
  /// fp8_gemm_reference_f64 of inputs "a", "b", "a_scale", "b_scale" as output "c".
  HostTensors cpu_reference(const Problem& problem, const HostTensors& inputs) const override;
  /// 64x128x64, 2x2 warps, 3 stages, no split, group 8: 36 KiB of shared memory (no opt-in).
  Config default_config(const Problem& problem) const override;

  /// Whether the problem's layout is "nt+rowcol"; throws ktune::Error(kBadInput) for a layout that
  /// is neither "nt" (or "") nor "nt+rowcol".
  static bool rowcol(const Problem& problem);
  /// rejection_for_arch(arch).
  std::optional<std::string> arch_rejection(std::string_view arch) const override;
  /// Why the template cannot run on `arch` ("sm_80", "sm_90", ...): e4m3 MMA needs sm_89 or newer;
  /// nullopt when it can. (A compile for an older arch also fails, with the same words.)
  static std::optional<std::string> rejection_for_arch(std::string_view arch);
  /// Dynamic shared memory of a config: STAGES * (BLOCK_M + BLOCK_N) * BLOCK_K bytes (unpadded).
  static int64_t shared_bytes(const Config& config);
  /// Why `problem` is outside fp8_gemm (dims, dtype, layout, K % 16), whatever the config; the
  /// wgmma variant (fp8_gemm_wgmma_spec.hpp) shares it.
  std::optional<std::string> problem_rejection(const Problem& problem) const;
  /// The tensors of a plan without split-K: a, b, a_scale, b_scale, c.
  static std::vector<TensorSpec> tensors(const Problem& problem);
};

}  // namespace ktune::kernel_templates
