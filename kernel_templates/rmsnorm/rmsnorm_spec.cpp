#include "kernel_templates/rmsnorm/rmsnorm_spec.hpp"

#include <fmt/format.h>

#include "kernel_templates/ops_spec_util.hpp"
#include "kernel_templates/reference_ops.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using namespace ops_detail;

const std::vector<std::string>& rms_modes() {
  static const std::vector<std::string> kModes = {"", "residual"};
  return kModes;
}

bool rms_has_residual(const Problem& p) { return p.layout == "residual"; }

const std::vector<double>& rms_input(const HostTensors& inputs, const char* name) {
  const auto it = inputs.find(name);
  if (it == inputs.end())
    throw Error(ErrorKind::kBadInput, fmt::format("rmsnorm cpu reference needs input '{}'", name));
  return it->second;
}

}  // namespace

int64_t RmsNormSpec::chunks(int64_t hidden, const Config& config) {
  return ceil_div(hidden, config.at("THREADS") * config.at("VEC"));
}

std::optional<std::string> RmsNormSpec::problem_rejection(const Problem& problem) const {
  if (auto why = dims_rejection(kernel(), problem, dims())) return why;
  if (auto why = dtype_rejection(kernel(), problem.dtype)) return why;
  if (!parse_mode(problem.layout, rms_modes())) {
    return fmt::format("rmsnorm mode '{}' is neither '' (plain) nor 'residual'", problem.layout);
  }
  return std::nullopt;
}

std::optional<std::string> RmsNormSpec::rejection(const Problem& problem, const Config& config) const {
  if (auto why = problem_rejection(problem)) return why;
  if (auto why = params_rejection(variant(), config, param_names())) return why;
  const int64_t threads = config.at("THREADS");
  const int64_t rows = config.at("ROWS");
  if (threads < 32 || threads % 32 != 0) return fmt::format("THREADS={} is not a multiple of 32", threads);
  if (rows < 1 || threads * rows > kMaxThreads) {
    return fmt::format("THREADS*ROWS={} is outside [32, {}]", threads * rows, kMaxThreads);
  }
  if (auto why = vec_rejection(config.at("VEC"), problem.dtype)) return why;
  const int64_t reg = config.at("REG");
  if (reg > 1) return fmt::format("REG={} is neither 0 nor 1", reg);
  const int64_t elem_bytes = static_cast<int64_t>(ktune::size_of(problem.dtype));
  const int64_t row_bytes = chunks(problem.dim("hidden"), config) * config.at("VEC") * elem_bytes;
  if (reg == 1 && row_bytes > kMaxRegisterBytes) {
    return fmt::format(
        "REG=1 keeps {} bytes of the row a thread for hidden={} (at most {}): use more THREADS or REG=0",
        row_bytes, problem.dim("hidden"), kMaxRegisterBytes);
  }
  return std::nullopt;
}

std::string RmsNormSpec::canonical_name(const Problem& problem, const Config& config) const {
  return fmt::format("rmsnorm.{}{}.t{}.r{}.v{}.reg{}", ktune::to_string(problem.dtype),
                     rms_has_residual(problem) ? ".residual" : "", config.at("THREADS"), config.at("ROWS"),
                     config.at("VEC"), config.at("REG"));
}

CompileSpec RmsNormSpec::compile_spec(const Problem& problem, const Config& config) const {
  throw_if(rejection(problem, config));
  const int64_t c = config.at("REG") == 1 ? chunks(problem.dim("hidden"), config) : 0;
  CompileSpec spec;
  spec.source_name = std::string(source_name());
  spec.name_expressions = {fmt::format(
      "ktune_rmsnorm<{},{},{},{},{},{}>", config.at("THREADS"), config.at("ROWS"), config.at("VEC"), c,
      rms_has_residual(problem) ? "true" : "false", ktune::cuda_type_name(problem.dtype))};
  spec.options = {"-std=c++17"};
  return spec;
}

std::vector<TensorSpec> RmsNormSpec::tensors(const Problem& problem) {
  const int64_t rows = problem.dim("rows");
  const int64_t hidden = problem.dim("hidden");
  const bool res = rms_has_residual(problem);
  std::vector<TensorSpec> out;
  out.push_back({"x", TensorRole::kInput, problem.dtype, rows * hidden});
  if (res) out.push_back({"residual", TensorRole::kInput, problem.dtype, rows * hidden});
  out.push_back({"w", TensorRole::kInput, problem.dtype, hidden});
  out.push_back({"y", TensorRole::kOutput, problem.dtype, rows * hidden});
  if (res) out.push_back({"residual_out", TensorRole::kOutput, problem.dtype, rows * hidden});
  return out;
}

std::vector<ArgSpec> RmsNormSpec::launch_args(const Problem& problem) {
  const bool res = rms_has_residual(problem);
  return {ArgSpec::of_tensor("x"),
          res ? ArgSpec::of_tensor("residual") : ArgSpec::null_pointer(),
          ArgSpec::of_tensor("w"),
          ArgSpec::of_tensor("y"),
          res ? ArgSpec::of_tensor("residual_out") : ArgSpec::null_pointer(),
          ArgSpec::i32(static_cast<int32_t>(problem.dim("rows"))),
          ArgSpec::i32(static_cast<int32_t>(problem.dim("hidden"))),
          ArgSpec::f32(kEps)};
}

LaunchPlan RmsNormSpec::launch_plan(const Problem& problem, const Config& config) const {
  const CompileSpec c = compile_spec(problem, config);
  LaunchPlan p;
  p.tensors = tensors(problem);
  KernelLaunch l;
  l.name_expression = c.name_expressions.front();
  l.dims.grid = {u32(ceil_div(problem.dim("rows"), config.at("ROWS"))), 1, 1};
  l.dims.block = {u32(config.at("THREADS") * config.at("ROWS")), 1, 1};
  l.args = launch_args(problem);
  p.launches.push_back(l);
  return p;
}

WorkCounts RmsNormSpec::work(const Problem& problem) const {
  const double n = static_cast<double>(problem.dim("rows")) * static_cast<double>(problem.dim("hidden"));
  const double es = static_cast<double>(ktune::size_of(problem.dtype));
  const double w = static_cast<double>(problem.dim("hidden")) * es;
  if (rms_has_residual(problem)) return {4.0 * n, 4.0 * n * es + w};
  return {3.0 * n, 2.0 * n * es + w};
}

std::vector<AlignmentRule> RmsNormSpec::alignment(const Problem& problem, const Config& config) const {
  const int64_t bytes = config.at("VEC") * static_cast<int64_t>(ktune::size_of(problem.dtype));
  const std::string note = fmt::format(
      "{}-byte vector access of a row when its pointer is {}-byte aligned (all rows: hidden % VEC == 0); "
      "otherwise the per-element path",
      bytes, bytes);
  std::vector<AlignmentRule> out = {
      {"x", bytes, false, note}, {"w", bytes, false, note}, {"y", bytes, false, note}};
  if (rms_has_residual(problem)) {
    out.push_back({"residual", bytes, false, note});
    out.push_back({"residual_out", bytes, false, note});
  }
  return out;
}

ReferenceSpec RmsNormSpec::reference(const Problem& problem) const {
  throw_if(problem_rejection(problem));
  const int64_t rows = problem.dim("rows");
  const int64_t hidden = problem.dim("hidden");
  const bool res = rms_has_residual(problem);
  constexpr int64_t kRowsPerBlock = 4;  // rmsnorm_reference.cu: a warp a row, 128 threads
  ReferenceSpec r;
  r.compile.source_name = "rmsnorm_reference.cu";
  const std::string expr = fmt::format("ktune_rmsnorm_reference<{},{}>", ktune::cuda_type_name(problem.dtype),
                                       res ? "true" : "false");
  r.compile.name_expressions = {expr};
  r.compile.options = {"-std=c++17"};
  r.plan.tensors.push_back({"x", TensorRole::kInput, problem.dtype, rows * hidden});
  if (res) r.plan.tensors.push_back({"residual", TensorRole::kInput, problem.dtype, rows * hidden});
  r.plan.tensors.push_back({"w", TensorRole::kInput, problem.dtype, hidden});
  r.plan.tensors.push_back({"y_ref", TensorRole::kOutput, DType::kF32, rows * hidden});
  if (res) r.plan.tensors.push_back({"residual_ref", TensorRole::kOutput, DType::kF32, rows * hidden});
  KernelLaunch l;
  l.name_expression = expr;
  l.dims.grid = {u32(ceil_div(rows, kRowsPerBlock)), 1, 1};
  l.dims.block = {u32(32 * kRowsPerBlock), 1, 1};
  l.args = {ArgSpec::of_tensor("x"),
            res ? ArgSpec::of_tensor("residual") : ArgSpec::null_pointer(),
            ArgSpec::of_tensor("w"),
            ArgSpec::of_tensor("y_ref"),
            res ? ArgSpec::of_tensor("residual_ref") : ArgSpec::null_pointer(),
            ArgSpec::i32(static_cast<int32_t>(rows)),
            ArgSpec::i32(static_cast<int32_t>(hidden)),
            ArgSpec::f32(kEps)};
  r.plan.launches = {l};
  r.compare = {{"y", "y_ref"}};
  if (res) r.compare.emplace_back("residual_out", "residual_ref");
  return r;
}

HostTensors RmsNormSpec::cpu_reference(const Problem& problem, const HostTensors& inputs) const {
  throw_if(problem_rejection(problem));
  const bool res = rms_has_residual(problem);
  static const std::vector<double> kNone;
  RmsNormResult r =
      rmsnorm_f64(rms_input(inputs, "x"), res ? rms_input(inputs, "residual") : kNone, rms_input(inputs, "w"),
                  problem.dim("rows"), problem.dim("hidden"), kEps, problem.dtype);
  HostTensors out;
  out["y"] = std::move(r.y);
  if (res) out["residual_out"] = std::move(r.residual_out);
  return out;
}

Config RmsNormSpec::default_config(const Problem& problem) const {
  return {"rowwise", {{"THREADS", 256}, {"ROWS", 1}, {"VEC", vec16(problem.dtype)}, {"REG", 0}}};
}

std::vector<std::string> RmsNormSpec::layouts() const { return rms_modes(); }

}  // namespace ktune::kernel_templates
