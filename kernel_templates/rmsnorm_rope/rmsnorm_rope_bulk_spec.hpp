#pragma once
/// Host-side spec of `rmsnorm_rope`'s bulk variant (rmsnorm_rope_bulk.cu, sm_90): the same problem,
/// modes, tensors, arguments, work and reference as the headwise variant (rmsnorm_rope_spec.hpp); a
/// block handles STEPS consecutive tokens from a ring of STAGES shared-memory stages (a token's q
/// row, k row and cos/sin row) filled by bulk copies.
/// Parameters: THREADS (a multiple of 32, <= 1024), STAGES (2..8), STEPS (tokens a block, 1..1024).
/// Needs: every tensor but positions 16-byte aligned (required: bulk copies and 16-byte stores),
/// two weight rows plus STAGES stages of (heads_q + heads_kv) * head_dim * sizeof(T) + head_dim * 4
/// bytes within the SM's 227 KB.
/// Name: `rmsnorm_rope.<dtype>.<neox|gptj>.bulk.t<THREADS>.s<STAGES>.n<STEPS>`.

#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates {

class RmsNormRopeBulkSpec final : public KernelSpec {
 public:
  std::string_view kernel() const override { return "rmsnorm_rope"; }
  std::string_view variant() const override { return "bulk"; }
  std::vector<std::string> dims() const override { return {"tokens", "heads_q", "heads_kv", "head_dim"}; }
  std::vector<DType> dtypes() const override { return {DType::kF32, DType::kF16, DType::kBF16}; }
  std::vector<std::string> layouts() const override;
  std::vector<std::string> param_names() const override { return {"THREADS", "STAGES", "STEPS"}; }
  std::string_view source_name() const override { return "rmsnorm_rope_bulk.cu"; }
  /// cp.async.bulk and mbarrier transaction counts: sm_90 or newer.
  std::optional<std::string> arch_rejection(std::string_view arch) const override;
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  /// `ktune_rmsnorm_rope_bulk<D,THREADS,STAGES,STEPS,GPTJ,T>`.
  CompileSpec compile_spec(const Problem& problem, const Config& config) const override;
  /// ceil(tokens / STEPS) blocks of THREADS threads, shared_bytes() of dynamic shared memory.
  LaunchPlan launch_plan(const Problem& problem, const Config& config) const override;
  WorkCounts work(const Problem& problem) const override;
  /// q, k, the weights, the table, q_out and k_out 16-byte aligned, positions 4-byte (all required).
  std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const override;
  ReferenceSpec reference(const Problem& problem) const override;
  HostTensors cpu_reference(const Problem& problem, const HostTensors& inputs) const override;
  /// 256 threads, 3 stages, 4 tokens a block.
  Config default_config(const Problem& problem) const override;

  /// Dynamic shared memory of a block: both weight rows and STAGES stages.
  static int64_t shared_bytes(const Problem& problem, const Config& config);
};

}  // namespace ktune::kernel_templates
