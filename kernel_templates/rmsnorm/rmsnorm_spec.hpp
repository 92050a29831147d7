#pragma once
/// Host-side spec of `rmsnorm` (rmsnorm.cu): y = x / sqrt(mean(x^2) + eps) * w per row of x
/// [rows, hidden], f32 accumulation, f32/f16/bf16 in and out (w in the same dtype).
/// Modes (Problem::layout): "" plain; "residual": s = T(x + residual) is normalised and also
/// written to residual_out (y = rmsnorm(s)).
/// Tensors: x, [residual], w [hidden] inputs; y, [residual_out] outputs. The GPU reference writes
/// y_ref, [residual_ref] (f32).
/// Parameters: THREADS (threads a row, a multiple of 32), ROWS (rows a block), VEC (elements a
/// vector access, <= 16 bytes), REG (1: the row stays in registers packed as T, at most 256 bytes a thread;
/// 0: x is read twice, any hidden).
/// Name: `rmsnorm.<dtype>[.residual].t<THREADS>.r<ROWS>.v<VEC>.reg<REG>`.

#include "kernel_templates/dispatch_binding.hpp"
#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates {

class RmsNormSpec final : public KernelSpec {
 public:
  /// eps of the launches the spec builds (Qwen3 and Qwen2.5 use 1e-6; dispatch passes the model's).
  static constexpr float kEps = 1e-6f;
  /// Runtime::rmsnorm's tensors (residual and residual_out null without the residual).
  static constexpr std::string_view kDispatchSlots[] = {"x", "residual", "w", "y", "residual_out"};
  /// The caller's eps replaces kEps (found by value: an f32 nothing else in a plan holds).
  static constexpr CallScalar kDispatchScalars[] = {
      {.name = "eps", .kind = CallScalar::Kind::kF32, .spec_value = kEps, .by_value = true}};
  /// How Runtime::rmsnorm binds to the family's templates.
  static constexpr DispatchBinding kDispatch = {
      .default_variant = "rowwise", .slots = kDispatchSlots, .scalars = kDispatchScalars};

  std::string_view kernel() const override { return "rmsnorm"; }
  std::string_view variant() const override { return "rowwise"; }
  std::vector<std::string> dims() const override { return {"rows", "hidden"}; }
  std::vector<DType> dtypes() const override { return {DType::kF32, DType::kF16, DType::kBF16}; }
  std::vector<std::string> layouts() const override;
  std::vector<std::string> param_names() const override { return {"THREADS", "ROWS", "VEC", "REG"}; }
  std::string_view source_name() const override { return "rmsnorm.cu"; }
  /// Rules: THREADS a multiple of 32, THREADS * ROWS <= 1024, VEC a power of two of <= 16 bytes,
  /// REG 0 or 1; REG 1 needs CHUNKS * VEC * sizeof(T) <= 256 bytes (CHUNKS = ceil(hidden / (THREADS * VEC))).
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  /// `ktune_rmsnorm<THREADS,ROWS,VEC,CHUNKS,RESIDUAL,T>`; CHUNKS is 0 for REG 0, so one cubin
  /// serves every hidden then.
  CompileSpec compile_spec(const Problem& problem, const Config& config) const override;
  LaunchPlan launch_plan(const Problem& problem, const Config& config) const override;
  /// 3 flops an element (4 with the residual); x, w (, residual) read and y (, residual_out) written once.
  WorkCounts work(const Problem& problem) const override;
  /// Every tensor aligned to VEC * sizeof(T) for the vector path (not required: per-element path).
  std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const override;
  ReferenceSpec reference(const Problem& problem) const override;
  /// Inputs x, w (, residual) -> y (, residual_out).
  HostTensors cpu_reference(const Problem& problem, const HostTensors& inputs) const override;
  /// 256 threads, 1 row, 16-byte vectors, read twice: serves every problem.
  Config default_config(const Problem& problem) const override;

  /// Vectors a thread holds with REG 1.
  static int64_t chunks(int64_t hidden, const Config& config);
  /// Why `problem` is outside rmsnorm (dimensions, dtype, mode), whatever the config; the bulk
  /// variant (rmsnorm_bulk_spec.hpp) shares it.
  std::optional<std::string> problem_rejection(const Problem& problem) const;
  /// The kernel arguments of a plan with the tensors of launch_plan(): x, residual or null, w, y,
  /// residual_out or null, rows, hidden, eps (both variants take them in this order).
  static std::vector<ArgSpec> launch_args(const Problem& problem);
  /// The plan's tensors: x, [residual], w, y, [residual_out].
  static std::vector<TensorSpec> tensors(const Problem& problem);
};

}  // namespace ktune::kernel_templates
