#pragma once
/// Host-side spec of `swiglu` (swiglu.cu): out = silu(gate) * up, f32 inside, T in and out, out
/// [m, i].
/// Modes (Problem::layout): "fused" (or ""): one input x [m, 2i], gate = the first half of each
/// row, up = the second half (vLLM's silu_and_mul); "split": inputs gate [m, i] and up [m, i].
/// Tensors: x or gate, up inputs; out output; the GPU reference writes out_ref (f32).
/// Parameters: THREADS (a block), VEC (<= 16 bytes), ITEMS (vectors a thread, all loaded before
/// any math). Rules: m <= 65535 (grid.y).
/// Name: `swiglu.<dtype>.<fused|split>.t<THREADS>.v<VEC>.e<ITEMS>`.

#include "kernel_templates/dispatch_binding.hpp"
#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates {

class SwigluSpec final : public KernelSpec {
 public:
  /// Runtime::swiglu's tensors (x in the fused mode, gate and up in the split one).
  static constexpr std::string_view kDispatchSlots[] = {"x", "gate", "up", "out"};
  /// How Runtime::swiglu binds to the family's templates.
  static constexpr DispatchBinding kDispatch = {.default_variant = "elementwise", .slots = kDispatchSlots};

  std::string_view kernel() const override { return "swiglu"; }
  std::string_view variant() const override { return "elementwise"; }
  std::vector<std::string> dims() const override { return {"m", "i"}; }
  std::vector<DType> dtypes() const override { return {DType::kF32, DType::kF16, DType::kBF16}; }
  std::vector<std::string> layouts() const override;
  std::vector<std::string> param_names() const override { return {"THREADS", "VEC", "ITEMS"}; }
  std::string_view source_name() const override { return "swiglu.cu"; }
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  /// `ktune_swiglu<THREADS,VEC,ITEMS,SPLIT,T>`.
  CompileSpec compile_spec(const Problem& problem, const Config& config) const override;
  LaunchPlan launch_plan(const Problem& problem, const Config& config) const override;
  /// 2 m i inputs read, m i outputs written; ~6 flops an element.
  WorkCounts work(const Problem& problem) const override;
  std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const override;
  ReferenceSpec reference(const Problem& problem) const override;
  /// Inputs x (fused) or gate and up (split) -> out.
  HostTensors cpu_reference(const Problem& problem, const HostTensors& inputs) const override;
  /// 256 threads, 16-byte vectors, 1 item: serves every problem.
  Config default_config(const Problem& problem) const override;

  /// Whether the problem's mode is "split"; throws ktune::Error(kBadInput) for an unknown mode.
  static bool split(const Problem& problem);

 private:
  std::optional<std::string> problem_rejection(const Problem& problem) const;
};

}  // namespace ktune::kernel_templates
