#pragma once
/// Host-side specs of the `gemm` family: C[M,N] = A[M,K] * B, B as [N,K] ("nt", the nn.Linear weight
/// layout) or [K,N] ("nn"); f32, f16 and bf16 inputs; f32 accumulation; C in the input dtype.
/// GemmSpecBase holds what every gemm template shares (tensors, work, references); TiledGemmSpec is
/// the shared-memory tiled template (gemm_tiled.cu). The GEMV template is in gemv_spec.hpp.

#include <optional>
#include <string>
#include <vector>

#include "kernel_templates/dispatch_binding.hpp"
#include "kernel_templates/gemm/reference_gemm.hpp"
#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates {

/// The problem's B layout: "nt" (or "", the default) or "nn"; nullopt for anything else.
std::optional<GemmLayout> parse_gemm_layout(std::string_view text);
/// "nt" or "nn".
std::string_view gemm_layout_name(GemmLayout layout);

/// A gemm problem's layout text split into B's layout and the epilogue. The epilogue belongs to the
/// problem (it changes the result), so it is written in its layout: "nt", "nn", optionally followed
/// by "+bias" (C += bias[n], an input tensor "bias" of N elements) and/or "+silu" (C = x / (1 +
/// e^-x)), in that order: "nt+bias+silu".
struct GemmForm {
  GemmLayout layout = GemmLayout::kNT;
  bool bias = false;
  bool silu = false;

  bool has_epilogue() const { return bias || silu; }
  /// "nt", "nn+bias", "nt+bias+silu", ...
  std::string text() const;
};

/// Parses "nt" / "nn" / "" (nt) with an optional "+bias" then "+silu"; nullopt for anything else.
std::optional<GemmForm> parse_gemm_form(std::string_view text);
/// Every layout text a gemm problem may have: "nt", "nn", each plain, +bias, +silu, +bias+silu.
std::vector<std::string> all_gemm_forms();

/// What every gemm template shares. Tensors: "a" [M*K], "b" [K*N], "c" [M*N] in the dtype,
/// "workspace" [SPLIT_K*M*N] f32 when a config splits K, and "bias" [N] in the dtype when the
/// problem's form has one. Every template serves the epilogue forms (GemmForm) of its layouts.
///
/// Every template takes the row strides of A, B and C as kernel arguments (ArgSpec::row_stride,
/// written contiguous: K for A, K ("nt") or N ("nn") for B, N for C), so one compiled config serves
/// strided views too (the dispatch runtime passes the caller's strides); the split-K reduction and
/// the epilogue pass write C through its stride. The workspace is always contiguous.
class GemmSpecBase : public KernelSpec {
 public:
  /// Runtime::gemm's tensors (bias null without the epilogue's).
  static constexpr std::string_view kDispatchSlots[] = {"a", "b", "c", "bias"};
  /// Untuned decode GEMMs (m <= 16) take the GEMV template, f16/bf16 the tensor-core one: the SIMT
  /// tiled default ran a Qwen3-0.6B decode step at 19.6 ms against ~1 ms tuned (H200,
  /// docs/perf/gemm.md); it stays the default of f32.
  static constexpr std::string_view kPreferredDefaults[] = {"gemv", "mma"};
  /// lda, ldb, ldc: the call's scalars 0, 1, 2 (the rows of strided views).
  static constexpr std::string_view kStridedTensors[] = {"a", "b", "c"};
  /// How Runtime::gemm binds to the family's templates.
  static constexpr DispatchBinding kDispatch = {.default_variant = "tiled",
                                                .preferred_defaults = kPreferredDefaults,
                                                .slots = kDispatchSlots,
                                                .row_strides = kStridedTensors};

  std::string_view kernel() const override { return "gemm"; }
  std::vector<std::string> dims() const override { return {"m", "n", "k"}; }
  std::vector<DType> dtypes() const override { return {DType::kF32, DType::kF16, DType::kBF16}; }
  /// Every form (all_gemm_forms()); a template that serves fewer says so.
  std::vector<std::string> layouts() const override { return all_gemm_forms(); }
  /// 2 M N K FLOPs; A, B (and the bias) read once and C written once.
  WorkCounts work(const Problem& problem) const override;
  /// gemm_reference.cu (one thread per element, f32 accumulation, output "c_ref" f32); with an
  /// epilogue gemm_epilogue_reference.cu, which adds the bias and applies SiLU the same way.
  ReferenceSpec reference(const Problem& problem) const override;
  /// gemm_reference_f64 of inputs "a" and "b" as output "c", + "bias", SiLU, in float64.
  HostTensors cpu_reference(const Problem& problem, const HostTensors& inputs) const override;

  /// `ktune_gemm_finish<T,BIAS,SILU>` (gemm_epilogue.cuh) for the problem's form.
  static std::string finish_name_expression(const Problem& problem);
  /// What ends a split-K config: the launch summing `slices` f32 slices of "workspace" in order into
  /// "c", through the epilogue (ktune_gemm_finish) when the form has one, else the plain reduction.
  KernelLaunch split_k_finish_launch(const Problem& problem, int64_t slices) const;
  /// The name expression split_k_finish_launch launches.
  static std::string split_k_finish_name_expression(const Problem& problem);

 protected:
  /// Problem checks shared by the templates (dims positive and within int32, dtype, the layout one
  /// of layouts()).
  std::optional<std::string> problem_rejection(const Problem& problem) const;
  /// Every name of param_names() present and positive.
  std::optional<std::string> params_rejection(const Config& config) const;
  /// a, b, c, when split_k > 1 the f32 workspace, then the bias when the form has one.
  std::vector<TensorSpec> tensors(const Problem& problem, int64_t split_k) const;
  /// The bias argument of a kernel: the "bias" tensor, or a null pointer without one.
  static ArgSpec bias_arg(const Problem& problem);
  /// The split-K reduction launch (gemm_splitk_reduce.cuh) summing `split_k` slices into "c".
  KernelLaunch reduce_launch(const Problem& problem, int64_t split_k) const;
  /// The row strides of "a", "b" and "c", written contiguous for the problem's layout: the GEMM
  /// kernels take them after the dimensions (`..., M, N, K, lda, ldb, ldc`).
  static std::vector<ArgSpec> row_stride_args(const Problem& problem);
  /// `ktune_gemm_splitk_reduce<T>`.
  static std::string reduce_name_expression(DType dtype);
  /// Throws ktune::Error(kBadInput) with the rejection, when there is one.
  void require_accepted(const Problem& problem, const Config& config) const;

 private:
  /// The one-launch GPU reference of `source`: `expr` over blocks of tile_x (along n) x tile_y
  /// threads; inputs "a", "b" (and "bias" when the form has one), output "c_ref" (f32) compared
  /// with "c". The epilogue reference takes the bias pointer after B; the plain one has none.
  static ReferenceSpec one_launch_reference(const Problem& problem, const GemmForm& form, const char* source,
                                            const std::string& expr, int64_t tile_x, int64_t tile_y);
};

/// gemm_tiled.cu. Parameters: BLOCK_M, BLOCK_N, BLOCK_K (the block's tile), WARPS_M x WARPS_N warps,
/// STAGES (cp.async pipeline depth, >= 2), SPLIT_K. Rules: BLOCK_M % (4 WARPS_M) == 0,
/// BLOCK_N % (8 WARPS_N) == 0, BLOCK_K a multiple of 16 bytes of the dtype, WARPS_M*WARPS_N <= 32.
/// Every form: "nt", "nn", with +bias and/or +silu.
/// Name: `gemm.<dtype>.<form>.<BM>x<BN>x<BK>.w<WM>x<WN>.s<STAGES>.sk<SPLIT_K>`.
class TiledGemmSpec final : public GemmSpecBase {
 public:
  std::string_view variant() const override { return "tiled"; }
  std::vector<std::string> param_names() const override;
  std::string_view source_name() const override { return "gemm_tiled.cu"; }
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  CompileSpec compile_spec(const Problem& problem, const Config& config) const override;
  LaunchPlan launch_plan(const Problem& problem, const Config& config) const override;
  std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const override;
  /// 64x64x32, 2x2 warps, 3 stages, no split.
  Config default_config(const Problem& problem) const override;

  /// Dynamic shared memory of a config: STAGES * (A tile + B tile), each row padded by 16 bytes.
  static int64_t shared_bytes(DType dtype, const Config& config, GemmLayout layout);
};

}  // namespace ktune::kernel_templates
