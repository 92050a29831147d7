#include "kernel_templates/rmsnorm/rmsnorm_bulk_spec.hpp"

#include <fmt/format.h>

#include "kernel_templates/ops_spec_util.hpp"
#include "kernel_templates/rmsnorm/rmsnorm_spec.hpp"

namespace ktune::kernel_templates {
namespace {

using namespace ops_detail;

/// Dynamic shared memory a block may take: sm_90's, less the static scratch and barriers.
constexpr int64_t kMaxRmsBulkDynamicBytes = kMaxSharedBytes - 256;
constexpr int64_t kMaxRmsBulkStages = 8;
constexpr int64_t kMaxRmsBulkSteps = 1024;
constexpr int64_t kRmsBulkCopyUnit = 16;  // bulk copies move 16-byte units from 16-byte aligned addresses

const RmsNormSpec& rowwise_rmsnorm() {
  static const RmsNormSpec kRowwise;
  return kRowwise;
}

bool bulk_has_residual(const Problem& p) { return p.layout == "residual"; }

int64_t row_bytes(const Problem& problem) {
  return problem.dim("hidden") * static_cast<int64_t>(ktune::size_of(problem.dtype));
}

}  // namespace

int64_t RmsNormBulkSpec::shared_bytes(const Problem& problem, const Config& config) {
  const int64_t inputs = bulk_has_residual(problem) ? 2 : 1;
  return (1 + config.at("STAGES") * inputs) * row_bytes(problem);
}

std::optional<std::string> RmsNormBulkSpec::arch_rejection(std::string_view arch) const {
  return min_arch_rejection(arch, 90, "the rmsnorm bulk variant", "cp.async.bulk");
}

std::optional<std::string> RmsNormBulkSpec::rejection(const Problem& problem, const Config& config) const {
  if (auto why = rowwise_rmsnorm().problem_rejection(problem)) return why;
  if (auto why = params_rejection(variant(), config, param_names())) return why;
  if (auto why = threads_rejection(config.at("THREADS"))) return why;
  const int64_t stages = config.at("STAGES");
  if (auto why = range_rejection("STAGES", stages, 2, kMaxRmsBulkStages)) return why;
  if (auto why = range_rejection("STEPS", config.at("STEPS"), 1, kMaxRmsBulkSteps)) return why;
  const int64_t write = config.at("WRITE");
  if (write > 1) return fmt::format("WRITE={} is neither 0 nor 1", write);
  if (write == 1 && stages < 3) {
    return fmt::format(
        "WRITE=1 keeps a stage until its row's store has read it: STAGES={} leaves no row loading "
        "ahead (use STAGES >= 3)",
        stages);
  }
  if (auto why = copy_unit_rejection("hidden", problem.dim("hidden"), problem.dtype)) return why;
  if (shared_bytes(problem, config) > kMaxRmsBulkDynamicBytes) {
    return fmt::format("STAGES={} rows of hidden={} need {} bytes of shared memory (at most {})", stages,
                       problem.dim("hidden"), shared_bytes(problem, config), kMaxRmsBulkDynamicBytes);
  }
  return std::nullopt;
}

std::string RmsNormBulkSpec::canonical_name(const Problem& problem, const Config& config) const {
  return fmt::format("rmsnorm.{}{}.bulk.t{}.s{}.n{}.w{}", ktune::to_string(problem.dtype),
                     bulk_has_residual(problem) ? ".residual" : "", config.at("THREADS"), config.at("STAGES"),
                     config.at("STEPS"), config.at("WRITE"));
}

CompileSpec RmsNormBulkSpec::compile_spec(const Problem& problem, const Config& config) const {
  throw_if(rejection(problem, config));
  CompileSpec spec;
  spec.source_name = std::string(source_name());
  spec.name_expressions = {fmt::format("ktune_rmsnorm_bulk<{},{},{},{},{},{}>", config.at("THREADS"),
                                       config.at("STAGES"), config.at("STEPS"), config.at("WRITE"),
                                       bulk_has_residual(problem) ? "true" : "false",
                                       ktune::cuda_type_name(problem.dtype))};
  spec.options = {"-std=c++17"};
  return spec;
}

LaunchPlan RmsNormBulkSpec::launch_plan(const Problem& problem, const Config& config) const {
  const CompileSpec c = compile_spec(problem, config);
  LaunchPlan p;
  p.tensors = RmsNormSpec::tensors(problem);
  KernelLaunch l;
  l.name_expression = c.name_expressions.front();
  l.dims.grid = {u32(ceil_div(problem.dim("rows"), config.at("STEPS"))), 1, 1};
  l.dims.block = {u32(config.at("THREADS")), 1, 1};
  l.dims.dynamic_smem_bytes = u32(shared_bytes(problem, config));
  l.args = RmsNormSpec::launch_args(problem);
  p.launches.push_back(l);
  return p;
}

WorkCounts RmsNormBulkSpec::work(const Problem& problem) const { return rowwise_rmsnorm().work(problem); }

std::vector<AlignmentRule> RmsNormBulkSpec::alignment(const Problem& problem, const Config& config) const {
  (void)config;
  const std::string note = "bulk copies (cp.async.bulk) of whole rows need 16-byte aligned addresses";
  std::vector<AlignmentRule> out = {{"x", kRmsBulkCopyUnit, true, note},
                                    {"w", kRmsBulkCopyUnit, true, note},
                                    {"y", kRmsBulkCopyUnit, true, note}};
  if (bulk_has_residual(problem)) {
    out.push_back({"residual", kRmsBulkCopyUnit, true, note});
    out.push_back({"residual_out", kRmsBulkCopyUnit, true, note});
  }
  return out;
}

ReferenceSpec RmsNormBulkSpec::reference(const Problem& problem) const {
  return rowwise_rmsnorm().reference(problem);
}

HostTensors RmsNormBulkSpec::cpu_reference(const Problem& problem, const HostTensors& inputs) const {
  return rowwise_rmsnorm().cpu_reference(problem, inputs);
}

Config RmsNormBulkSpec::default_config(const Problem& problem) const {
  (void)problem;
  return {"bulk", {{"THREADS", 256}, {"STAGES", 2}, {"STEPS", 4}, {"WRITE", 0}}};
}

std::vector<std::string> RmsNormBulkSpec::layouts() const { return rowwise_rmsnorm().layouts(); }

}  // namespace ktune::kernel_templates
