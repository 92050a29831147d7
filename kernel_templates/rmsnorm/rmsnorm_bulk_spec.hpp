#pragma once
/// Host-side spec of `rmsnorm`'s bulk variant (rmsnorm_bulk.cu, sm_90): the same problem, tensors,
/// arguments, work and reference as the rowwise variant (rmsnorm_spec.hpp); a block normalises
/// STEPS consecutive rows from a ring of STAGES shared-memory row buffers filled by bulk copies.
/// Parameters: THREADS (a multiple of 32, <= 1024), STAGES (2..8 row buffers), STEPS (rows a block,
/// 1..1024), WRITE (0: y stored from registers; 1: y written into the stage and stored by a bulk
/// copy, STAGES >= 3).
/// Needs: hidden * sizeof(T) a multiple of 16 bytes, every tensor 16-byte aligned (required: bulk
/// copies move 16-byte units), and (1 + STAGES * inputs) rows of shared memory within the SM's
/// 227 KB (inputs: 1, or 2 with the residual).
/// Name: `rmsnorm.<dtype>[.residual].bulk.t<THREADS>.s<STAGES>.n<STEPS>.w<WRITE>`.

#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates {

class RmsNormBulkSpec final : public KernelSpec {
 public:
  std::string_view kernel() const override { return "rmsnorm"; }
  std::string_view variant() const override { return "bulk"; }
  std::vector<std::string> dims() const override { return {"rows", "hidden"}; }
  std::vector<DType> dtypes() const override { return {DType::kF32, DType::kF16, DType::kBF16}; }
  std::vector<std::string> layouts() const override;
  std::vector<std::string> param_names() const override { return {"THREADS", "STAGES", "STEPS", "WRITE"}; }
  std::string_view source_name() const override { return "rmsnorm_bulk.cu"; }
  /// cp.async.bulk and mbarrier transaction counts: sm_90 or newer.
  std::optional<std::string> arch_rejection(std::string_view arch) const override;
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  /// `ktune_rmsnorm_bulk<THREADS,STAGES,STEPS,WRITE,RESIDUAL,T>`: one cubin serves every shape.
  CompileSpec compile_spec(const Problem& problem, const Config& config) const override;
  /// ceil(rows / STEPS) blocks of THREADS threads, shared_bytes() of dynamic shared memory.
  LaunchPlan launch_plan(const Problem& problem, const Config& config) const override;
  WorkCounts work(const Problem& problem) const override;
  /// Every tensor 16-byte aligned, required.
  std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const override;
  ReferenceSpec reference(const Problem& problem) const override;
  HostTensors cpu_reference(const Problem& problem, const HostTensors& inputs) const override;
  /// 256 threads, 2 stages, 4 rows a block, register stores.
  Config default_config(const Problem& problem) const override;

  /// Dynamic shared memory of a block: w and STAGES buffers of each input row.
  static int64_t shared_bytes(const Problem& problem, const Config& config);
};

}  // namespace ktune::kernel_templates
