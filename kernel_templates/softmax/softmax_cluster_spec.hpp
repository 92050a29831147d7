#pragma once
/// Host-side spec of `softmax`'s cluster variant (softmax_cluster.cu, sm_90): the same problem,
/// modes, tensors, work and reference as the rowwise variant (softmax_spec.hpp), for long rows read
/// from DRAM once: a row is split over a thread block cluster of CLUSTER blocks, each holding its
/// segment in shared memory (one bulk copy), the segments' (max, sum) combined through distributed
/// shared memory.
/// Parameters: THREADS (a multiple of 32, <= 1024), CLUSTER (blocks a row, 1..8: the portable
/// cluster size).
/// Needs: cols * sizeof(T) a multiple of 16 and x, y 16-byte aligned (required: bulk copies and
/// 16-byte stores), a segment (ceil(cols / CLUSTER) rounded up to 16 bytes) within 227 KB of shared
/// memory, rows <= 65535 (grid.y).
/// Name: `softmax.<dtype>[.causal|.padding].cluster.t<THREADS>.c<CLUSTER>`.

#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates {

class SoftmaxClusterSpec final : public KernelSpec {
 public:
  std::string_view kernel() const override { return "softmax"; }
  std::string_view variant() const override { return "cluster"; }
  std::vector<std::string> dims() const override { return {"rows", "cols"}; }
  std::vector<DType> dtypes() const override { return {DType::kF32, DType::kF16, DType::kBF16}; }
  std::vector<std::string> layouts() const override;
  std::vector<std::string> param_names() const override { return {"THREADS", "CLUSTER"}; }
  std::string_view source_name() const override { return "softmax_cluster.cu"; }
  /// Thread block clusters, distributed shared memory and cp.async.bulk: sm_90 or newer.
  std::optional<std::string> arch_rejection(std::string_view arch) const override;
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  /// `ktune_softmax_cluster<THREADS,CLUSTER,MASK,T>`.
  CompileSpec compile_spec(const Problem& problem, const Config& config) const override;
  /// One launch, grid (CLUSTER, rows) in clusters of (CLUSTER, 1, 1), segment_bytes() of dynamic
  /// shared memory; the arguments of softmax_spec.hpp's launch_args plus the segment in columns.
  LaunchPlan launch_plan(const Problem& problem, const Config& config) const override;
  WorkCounts work(const Problem& problem) const override;
  /// x and y 16-byte aligned (required), lengths 4-byte aligned (required, padding mode).
  std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const override;
  ReferenceSpec reference(const Problem& problem) const override;
  HostTensors cpu_reference(const Problem& problem, const HostTensors& inputs) const override;
  /// 512 threads, clusters of 8.
  Config default_config(const Problem& problem) const override;

  /// Columns a block: ceil(cols / CLUSTER) rounded up to 16 bytes.
  static int64_t segment(const Problem& problem, const Config& config);
  /// Dynamic shared memory of a block: its segment as T.
  static int64_t segment_bytes(const Problem& problem, const Config& config);
};

}  // namespace ktune::kernel_templates
