#pragma once
/// Host-side spec of `rmsnorm_rope` (rmsnorm_rope.cu): per-head RMSNorm of q [tokens, heads_q,
/// head_dim] and k [tokens, heads_kv, head_dim] (weights q_weight, k_weight of head_dim) fused
/// with the rotary embedding at positions[token], f32 inside, T in and out.
/// Modes (Problem::layout): "neox" (or "", rotate-half pairs j, j + D/2) and "gptj" (interleaved
/// pairs 2j, 2j + 1). head_dim: 64, 128 or 256.
/// Tensors: q, k, q_weight, k_weight, cos_sin [kMaxPos, head_dim] f32 (cos at [p][j], sin at
/// [p][D/2 + j]), positions [tokens] inputs; q_out, k_out outputs; the GPU reference writes q_ref,
/// k_ref (f32).
/// `positions` holds int32 values but is declared DType::kF32 (same size): ktune::DType has no
/// integer type yet. The harness's random fill then gives arbitrary 32-bit patterns, which the
/// kernel and both references take modulo max_pos as unsigned: random positions, never out of the
/// table. Hand cpu_reference the int32 values (as doubles), not a float decoding of the bits.
/// Parameters: THREADS (lanes a head: 1..32, a power of two), HEADS (heads a block), VEC (even,
/// <= 16 bytes), ITEMS (heads a lane group loads at once: 1, 2, 4), OCC (0, or threads an SM that
/// __launch_bounds__ asks ptxas to fit: caps the registers a thread at about 65536 / OCC).
/// Rules: (head_dim / 2) % (THREADS * VEC) == 0; THREADS * HEADS a multiple of 32 and <= 1024; OCC
/// whole blocks, at most kMaxBlocksPerSm of them and kMaxThreadsPerSm threads.
/// Name: `rmsnorm_rope.<dtype>.<neox|gptj>.t<THREADS>.h<HEADS>.v<VEC>.i<ITEMS>.o<OCC>`.

#include "kernel_templates/dispatch_binding.hpp"
#include "kernel_templates/kernel_spec.hpp"
#include "kernel_templates/reference_ops.hpp"

namespace ktune::kernel_templates {

class RmsNormRopeSpec final : public KernelSpec {
 public:
  static constexpr float kEps = 1e-6f;
  /// Rows of the cos/sin table of the launches the spec builds (dispatch passes the model's).
  static constexpr int64_t kMaxPos = 4096;
  /// Blocks and threads an SM holds at most (sm_80 .. sm_90): bound OCC.
  static constexpr int64_t kMaxBlocksPerSm = 32;
  static constexpr int64_t kMaxThreadsPerSm = 2048;

  /// The parameters of both templates' kernels (ktune_rmsnorm_rope, ktune_rmsnorm_rope_bulk), in
  /// order: launch_args.
  static constexpr std::string_view kSignature[] = {"q",         "k",       "q_weight", "k_weight", "cos_sin",
                                                    "positions", "q_out",   "k_out",    "tokens",   "heads_q",
                                                    "heads_kv",  "max_pos", "eps"};
  /// Runtime::rmsnorm_rope's tensors.
  static constexpr std::string_view kDispatchSlots[] = {"q",       "k",         "q_weight", "k_weight",
                                                        "cos_sin", "positions", "q_out",    "k_out"};
  /// The caller's max_pos (an i32 that a dimension could equal: by name) and eps (by value).
  static constexpr CallScalar kDispatchScalars[] = {
      {.name = "max_pos", .kind = CallScalar::Kind::kI32, .spec_value = static_cast<double>(kMaxPos)},
      {.name = "eps", .kind = CallScalar::Kind::kF32, .spec_value = kEps, .by_value = true}};
  /// How Runtime::rmsnorm_rope binds to the family's templates.
  static constexpr DispatchBinding kDispatch = {.default_variant = "headwise",
                                                .slots = kDispatchSlots,
                                                .signature = kSignature,
                                                .scalars = kDispatchScalars};

  std::string_view kernel() const override { return "rmsnorm_rope"; }
  std::string_view variant() const override { return "headwise"; }
  std::vector<std::string> dims() const override { return {"tokens", "heads_q", "heads_kv", "head_dim"}; }
  std::vector<DType> dtypes() const override { return {DType::kF32, DType::kF16, DType::kBF16}; }
  std::vector<std::string> layouts() const override;
  std::vector<std::string> param_names() const override {
    return {"THREADS", "HEADS", "VEC", "ITEMS", "OCC"};
  }
  std::string_view source_name() const override { return "rmsnorm_rope.cu"; }
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  /// `ktune_rmsnorm_rope<HEAD_DIM,THREADS,VEC,HEADS,ITEMS,OCC,GPTJ,T>`: grid ceil(items / (HEADS *
  /// ITEMS)), each lane group normalising ITEMS heads.
  CompileSpec compile_spec(const Problem& problem, const Config& config) const override;
  LaunchPlan launch_plan(const Problem& problem, const Config& config) const override;
  /// q and k read and written once, the weights, positions and one table row a token read once.
  WorkCounts work(const Problem& problem) const override;
  std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const override;
  ReferenceSpec reference(const Problem& problem) const override;
  /// Inputs q, k, q_weight, k_weight, cos_sin, positions (int32 values) -> q_out, k_out.
  HostTensors cpu_reference(const Problem& problem, const HostTensors& inputs) const override;
  /// 16 lanes, 8 heads a block, VEC 2: serves every head_dim and dtype.
  Config default_config(const Problem& problem) const override;

  /// The problem's pairing; throws ktune::Error(kBadInput) for an unknown mode.
  static RopeStyle style(const Problem& problem);

  /// Why `problem` is outside rmsnorm_rope (dims, dtype, mode, head_dim), whatever the config; the
  /// bulk variant (rmsnorm_rope_bulk_spec.hpp) shares it.
  std::optional<std::string> problem_rejection(const Problem& problem) const;
  /// The plan's tensors: q, k, q_weight, k_weight, cos_sin, positions, q_out, k_out.
  static std::vector<TensorSpec> tensors(const Problem& problem);
  /// The kernel arguments of both variants: the tensors in that order, then tokens, heads_q,
  /// heads_kv, max_pos, eps.
  static std::vector<ArgSpec> launch_args(const Problem& problem);
};

}  // namespace ktune::kernel_templates
