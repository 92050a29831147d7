#include "kernel_templates/rmsnorm_rope/rmsnorm_rope_bulk_spec.hpp"

#include <fmt/format.h>

#include "kernel_templates/ops_spec_util.hpp"
#include "kernel_templates/rmsnorm_rope/rmsnorm_rope_spec.hpp"

namespace ktune::kernel_templates {
namespace {

using namespace ops_detail;

/// Dynamic shared memory a block may take: sm_90's, less the barriers.
constexpr int64_t kMaxRopeBulkDynamicBytes = kMaxSharedBytes - 128;
constexpr int64_t kMaxRopeBulkStages = 8;
constexpr int64_t kMaxRopeBulkSteps = 1024;

const RmsNormRopeSpec& headwise() {
  static const RmsNormRopeSpec kHeadwise;
  return kHeadwise;
}

int64_t rope_elem_bytes(const Problem& p) { return static_cast<int64_t>(ktune::size_of(p.dtype)); }

}  // namespace

int64_t RmsNormRopeBulkSpec::shared_bytes(const Problem& problem, const Config& config) {
  const int64_t d = problem.dim("head_dim");
  const int64_t stage =
      (problem.dim("heads_q") + problem.dim("heads_kv")) * d * rope_elem_bytes(problem) + d * 4;
  return 2 * d * rope_elem_bytes(problem) + config.at("STAGES") * stage;
}

std::optional<std::string> RmsNormRopeBulkSpec::arch_rejection(std::string_view arch) const {
  return min_arch_rejection(arch, 90, "the rmsnorm_rope bulk variant", "cp.async.bulk");
}

std::optional<std::string> RmsNormRopeBulkSpec::rejection(const Problem& problem,
                                                          const Config& config) const {
  if (auto why = headwise().problem_rejection(problem)) return why;
  if (auto why = params_rejection(variant(), config, param_names())) return why;
  if (auto why = threads_rejection(config.at("THREADS"))) return why;
  const int64_t stages = config.at("STAGES");
  if (auto why = range_rejection("STAGES", stages, 2, kMaxRopeBulkStages)) return why;
  if (auto why = range_rejection("STEPS", config.at("STEPS"), 1, kMaxRopeBulkSteps)) return why;
  if (shared_bytes(problem, config) > kMaxRopeBulkDynamicBytes) {
    return fmt::format("STAGES={} stages of {} heads need {} bytes of shared memory (at most {})", stages,
                       problem.dim("heads_q") + problem.dim("heads_kv"), shared_bytes(problem, config),
                       kMaxRopeBulkDynamicBytes);
  }
  return std::nullopt;
}

std::string RmsNormRopeBulkSpec::canonical_name(const Problem& problem, const Config& config) const {
  return fmt::format("rmsnorm_rope.{}.{}.bulk.t{}.s{}.n{}", ktune::to_string(problem.dtype),
                     RmsNormRopeSpec::style(problem) == RopeStyle::kGptj ? "gptj" : "neox",
                     config.at("THREADS"), config.at("STAGES"), config.at("STEPS"));
}

CompileSpec RmsNormRopeBulkSpec::compile_spec(const Problem& problem, const Config& config) const {
  throw_if(rejection(problem, config));
  CompileSpec c;
  c.source_name = std::string(source_name());
  c.name_expressions = {fmt::format("ktune_rmsnorm_rope_bulk<{},{},{},{},{},{}>", problem.dim("head_dim"),
                                    config.at("THREADS"), config.at("STAGES"), config.at("STEPS"),
                                    RmsNormRopeSpec::style(problem) == RopeStyle::kGptj ? "true" : "false",
                                    ktune::cuda_type_name(problem.dtype))};
  c.options = {"-std=c++17"};
  return c;
}

LaunchPlan RmsNormRopeBulkSpec::launch_plan(const Problem& problem, const Config& config) const {
  const CompileSpec c = compile_spec(problem, config);
  LaunchPlan p;
  p.tensors = RmsNormRopeSpec::tensors(problem);
  KernelLaunch l;
  l.name_expression = c.name_expressions.front();
  l.dims.grid = {u32(ceil_div(problem.dim("tokens"), config.at("STEPS"))), 1, 1};
  l.dims.block = {u32(config.at("THREADS")), 1, 1};
  l.dims.dynamic_smem_bytes = u32(shared_bytes(problem, config));
  l.args = RmsNormRopeSpec::launch_args(problem);
  p.launches.push_back(l);
  return p;
}

WorkCounts RmsNormRopeBulkSpec::work(const Problem& problem) const { return headwise().work(problem); }

std::vector<AlignmentRule> RmsNormRopeBulkSpec::alignment(const Problem&, const Config&) const {
  const std::string note = "bulk copies of whole rows and 16-byte stores need 16-byte aligned tensors";
  std::vector<AlignmentRule> out;
  for (const char* t : {"q", "k", "q_weight", "k_weight", "cos_sin", "q_out", "k_out"})
    out.push_back({t, 16, true, note});
  out.push_back({"positions", 4, true, "int32 positions"});
  return out;
}

ReferenceSpec RmsNormRopeBulkSpec::reference(const Problem& problem) const {
  return headwise().reference(problem);
}

HostTensors RmsNormRopeBulkSpec::cpu_reference(const Problem& problem, const HostTensors& inputs) const {
  return headwise().cpu_reference(problem, inputs);
}

Config RmsNormRopeBulkSpec::default_config(const Problem&) const {
  return {"bulk", {{"THREADS", 256}, {"STAGES", 3}, {"STEPS", 4}}};
}

std::vector<std::string> RmsNormRopeBulkSpec::layouts() const { return headwise().layouts(); }

}  // namespace ktune::kernel_templates
