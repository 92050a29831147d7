#include "kernel_templates/softmax/softmax_cluster_spec.hpp"

#include <fmt/format.h>

#include "kernel_templates/ops_spec_util.hpp"
#include "kernel_templates/softmax/softmax_spec.hpp"

namespace ktune::kernel_templates {
namespace {

using namespace ops_detail;

/// Dynamic shared memory a block may take: sm_90's, less the reduction scratch of 1024 threads,
/// the partial and the pieces' barriers.
constexpr int64_t kMaxSegmentBytes = kMaxSharedBytes - 512;
constexpr int64_t kMaxSoftmaxCluster = 8;  // the portable cluster size
constexpr int64_t kSoftmaxCopyUnit = 16;   // bulk copies and vector stores move 16-byte units

const SoftmaxSpec& rowwise_softmax() {
  static const SoftmaxSpec kRowwise;
  return kRowwise;
}

int64_t softmax_elem_bytes(const Problem& p) { return static_cast<int64_t>(ktune::size_of(p.dtype)); }

}  // namespace

int64_t SoftmaxClusterSpec::segment(const Problem& problem, const Config& config) {
  const int64_t vec = kSoftmaxCopyUnit / softmax_elem_bytes(problem);
  return ceil_div(ceil_div(problem.dim("cols"), config.at("CLUSTER")), vec) * vec;
}

int64_t SoftmaxClusterSpec::segment_bytes(const Problem& problem, const Config& config) {
  return segment(problem, config) * softmax_elem_bytes(problem);
}

std::optional<std::string> SoftmaxClusterSpec::arch_rejection(std::string_view arch) const {
  return min_arch_rejection(arch, 90, "the softmax cluster variant", "thread block clusters");
}

std::optional<std::string> SoftmaxClusterSpec::rejection(const Problem& problem, const Config& config) const {
  if (auto why = rowwise_softmax().problem_rejection(problem)) return why;
  if (auto why = params_rejection(variant(), config, param_names())) return why;
  if (auto why = threads_rejection(config.at("THREADS"))) return why;
  const int64_t cluster = config.at("CLUSTER");
  if (auto why = range_rejection("CLUSTER", cluster, 1, kMaxSoftmaxCluster)) return why;  // the portable size
  if (auto why = copy_unit_rejection("cols", problem.dim("cols"), problem.dtype)) return why;
  if (segment_bytes(problem, config) > kMaxSegmentBytes) {
    return fmt::format("CLUSTER={} leaves {} bytes of cols={} a block (at most {}): use a larger cluster",
                       cluster, segment_bytes(problem, config), problem.dim("cols"), kMaxSegmentBytes);
  }
  if (problem.dim("rows") > kMaxGridY) {
    return fmt::format("rows={} exceeds {} (grid.y)", problem.dim("rows"), kMaxGridY);
  }
  return std::nullopt;
}

std::string SoftmaxClusterSpec::canonical_name(const Problem& problem, const Config& config) const {
  return fmt::format("{}.cluster.t{}.c{}", SoftmaxSpec::name_prefix(problem), config.at("THREADS"),
                     config.at("CLUSTER"));
}

CompileSpec SoftmaxClusterSpec::compile_spec(const Problem& problem, const Config& config) const {
  throw_if(rejection(problem, config));
  CompileSpec spec;
  spec.source_name = std::string(source_name());
  spec.name_expressions = {fmt::format("ktune_softmax_cluster<{},{},{},{}>", config.at("THREADS"),
                                       config.at("CLUSTER"), SoftmaxSpec::mask_code(problem),
                                       ktune::cuda_type_name(problem.dtype))};
  spec.options = {"-std=c++17"};
  return spec;
}

LaunchPlan SoftmaxClusterSpec::launch_plan(const Problem& problem, const Config& config) const {
  const CompileSpec c = compile_spec(problem, config);
  LaunchPlan p;
  p.tensors = SoftmaxSpec::tensors(problem);
  KernelLaunch l;
  l.name_expression = c.name_expressions.front();
  l.dims.grid = {u32(config.at("CLUSTER")), u32(problem.dim("rows")), 1};
  l.dims.block = {u32(config.at("THREADS")), 1, 1};
  l.dims.dynamic_smem_bytes = u32(segment_bytes(problem, config));
  l.args = SoftmaxSpec::launch_args(problem);
  l.args.push_back(ArgSpec::i32(static_cast<int32_t>(segment(problem, config))));
  p.launches.push_back(l);
  return p;
}

WorkCounts SoftmaxClusterSpec::work(const Problem& problem) const { return rowwise_softmax().work(problem); }

std::vector<AlignmentRule> SoftmaxClusterSpec::alignment(const Problem& problem, const Config&) const {
  const std::string note = "bulk copies of x and 16-byte stores of y need 16-byte aligned rows";
  std::vector<AlignmentRule> out = {{"x", kSoftmaxCopyUnit, true, note}, {"y", kSoftmaxCopyUnit, true, note}};
  if (SoftmaxSpec::mask(problem) == SoftmaxMask::kPadding)
    out.push_back({"lengths", 4, true, "int32 lengths"});
  return out;
}

ReferenceSpec SoftmaxClusterSpec::reference(const Problem& problem) const {
  return rowwise_softmax().reference(problem);
}

HostTensors SoftmaxClusterSpec::cpu_reference(const Problem& problem, const HostTensors& inputs) const {
  return rowwise_softmax().cpu_reference(problem, inputs);
}

Config SoftmaxClusterSpec::default_config(const Problem&) const {
  return {"cluster", {{"THREADS", 512}, {"CLUSTER", 8}}};
}

std::vector<std::string> SoftmaxClusterSpec::layouts() const { return rowwise_softmax().layouts(); }

}  // namespace ktune::kernel_templates
