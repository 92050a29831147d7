#include "kernel_templates/swiglu/swiglu_spec.hpp"

#include <fmt/format.h>

#include "kernel_templates/ops_spec_util.hpp"
#include "kernel_templates/reference_ops.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using namespace ops_detail;

const std::vector<std::string>& swiglu_modes() {
  static const std::vector<std::string> kModes = {"fused", "split"};
  return kModes;
}

std::vector<TensorSpec> inputs_of(const Problem& p) {
  const int64_t n = p.dim("m") * p.dim("i");
  if (SwigluSpec::split(p)) {
    return {{"gate", TensorRole::kInput, p.dtype, n}, {"up", TensorRole::kInput, p.dtype, n}};
  }
  return {{"x", TensorRole::kInput, p.dtype, 2 * n}};
}

std::vector<ArgSpec> swiglu_args(const Problem& p, const char* out) {
  const bool s = SwigluSpec::split(p);
  return {ArgSpec::of_tensor(s ? "gate" : "x"), s ? ArgSpec::of_tensor("up") : ArgSpec::null_pointer(),
          ArgSpec::of_tensor(out), ArgSpec::i32(static_cast<int32_t>(p.dim("m"))),
          ArgSpec::i32(static_cast<int32_t>(p.dim("i")))};
}

}  // namespace

bool SwigluSpec::split(const Problem& problem) {
  const auto m = parse_mode(problem.layout, swiglu_modes());
  if (!m)
    throw Error(ErrorKind::kBadInput,
                fmt::format("swiglu mode '{}' is neither 'fused' nor 'split'", problem.layout));
  return *m == "split";
}

std::optional<std::string> SwigluSpec::problem_rejection(const Problem& problem) const {
  if (auto why = dims_rejection(kernel(), problem, dims())) return why;
  if (auto why = dtype_rejection(kernel(), problem.dtype)) return why;
  if (!parse_mode(problem.layout, swiglu_modes())) {
    return fmt::format("swiglu mode '{}' is neither 'fused' nor 'split'", problem.layout);
  }
  if (problem.dim("m") > kMaxGridY)
    return fmt::format("swiglu serves m <= {} (grid.y), not {}", kMaxGridY, problem.dim("m"));
  if (2 * problem.dim("i") > kMaxDim)
    return fmt::format("swiglu: 2*i={} exceeds {}", 2 * problem.dim("i"), kMaxDim);
  return std::nullopt;
}

std::optional<std::string> SwigluSpec::rejection(const Problem& problem, const Config& config) const {
  if (auto why = problem_rejection(problem)) return why;
  if (auto why = params_rejection(variant(), config, param_names())) return why;
  const int64_t threads = config.at("THREADS");
  if (threads < 32 || threads % 32 != 0 || threads > kMaxThreads) {
    return fmt::format("THREADS={} is not a multiple of 32 in [32, {}]", threads, kMaxThreads);
  }
  if (auto why = vec_rejection(config.at("VEC"), problem.dtype)) return why;
  const int64_t items = config.at("ITEMS");
  if (items < 1 || items * config.at("VEC") > kMaxRegisterElems / 2) {
    return fmt::format("ITEMS*VEC={} is outside [1, {}] (gate and up values a thread)",
                       items * config.at("VEC"), kMaxRegisterElems / 2);
  }
  return std::nullopt;
}

std::string SwigluSpec::canonical_name(const Problem& problem, const Config& config) const {
  const auto mode = parse_mode(problem.layout, swiglu_modes()).value_or(problem.layout);
  return fmt::format("swiglu.{}.{}.t{}.v{}.e{}", ktune::to_string(problem.dtype), mode, config.at("THREADS"),
                     config.at("VEC"), config.at("ITEMS"));
}

CompileSpec SwigluSpec::compile_spec(const Problem& problem, const Config& config) const {
  throw_if(rejection(problem, config));
  CompileSpec c;
  c.source_name = std::string(source_name());
  c.name_expressions = {fmt::format("ktune_swiglu<{},{},{},{},{}>", config.at("THREADS"), config.at("VEC"),
                                    config.at("ITEMS"), split(problem) ? "true" : "false",
                                    ktune::cuda_type_name(problem.dtype))};
  c.options = {"-std=c++17"};
  return c;
}

LaunchPlan SwigluSpec::launch_plan(const Problem& problem, const Config& config) const {
  const CompileSpec c = compile_spec(problem, config);
  LaunchPlan p;
  p.tensors = inputs_of(problem);
  p.tensors.push_back({"out", TensorRole::kOutput, problem.dtype, problem.dim("m") * problem.dim("i")});
  KernelLaunch l;
  l.name_expression = c.name_expressions.front();
  const int64_t per_block = config.at("THREADS") * config.at("VEC") * config.at("ITEMS");
  l.dims.grid = {u32(ceil_div(problem.dim("i"), per_block)), u32(problem.dim("m")), 1};
  l.dims.block = {u32(config.at("THREADS")), 1, 1};
  l.args = swiglu_args(problem, "out");
  p.launches.push_back(l);
  return p;
}

WorkCounts SwigluSpec::work(const Problem& problem) const {
  const double n = static_cast<double>(problem.dim("m")) * static_cast<double>(problem.dim("i"));
  const double es = static_cast<double>(ktune::size_of(problem.dtype));
  // negate, exp, add, divide, two multiplies.
  return {6.0 * n, 3.0 * n * es};
}

std::vector<AlignmentRule> SwigluSpec::alignment(const Problem& problem, const Config& config) const {
  const int64_t bytes = config.at("VEC") * static_cast<int64_t>(ktune::size_of(problem.dtype));
  const std::string note = fmt::format(
      "{}-byte vector access of a row when its gate, up and out are {}-byte aligned ({}); otherwise the "
      "per-element path",
      bytes, bytes, split(problem) ? "every row: i % VEC == 0" : "every row and the up half: i % VEC == 0");
  std::vector<AlignmentRule> out;
  for (const auto& t : inputs_of(problem)) out.push_back({t.name, bytes, false, note});
  out.push_back({"out", bytes, false, note});
  return out;
}

ReferenceSpec SwigluSpec::reference(const Problem& problem) const {
  throw_if(problem_rejection(problem));
  const int64_t n = problem.dim("m") * problem.dim("i");
  constexpr int64_t kThreads = 256;  // swiglu_reference.cu: a thread an element
  ReferenceSpec r;
  r.compile.source_name = "swiglu_reference.cu";
  const std::string expr = fmt::format("ktune_swiglu_reference<{},{}>", ktune::cuda_type_name(problem.dtype),
                                       split(problem) ? "true" : "false");
  r.compile.name_expressions = {expr};
  r.compile.options = {"-std=c++17"};
  r.plan.tensors = inputs_of(problem);
  r.plan.tensors.push_back({"out_ref", TensorRole::kOutput, DType::kF32, n});
  KernelLaunch l;
  l.name_expression = expr;
  l.dims.grid = {u32(ceil_div(n, kThreads)), 1, 1};
  l.dims.block = {u32(kThreads), 1, 1};
  l.args = swiglu_args(problem, "out_ref");
  r.plan.launches = {l};
  r.compare = {{"out", "out_ref"}};
  return r;
}

HostTensors SwigluSpec::cpu_reference(const Problem& problem, const HostTensors& inputs) const {
  throw_if(problem_rejection(problem));
  auto need = [&](const char* name) -> const std::vector<double>& {
    const auto it = inputs.find(name);
    if (it == inputs.end())
      throw Error(ErrorKind::kBadInput, fmt::format("swiglu cpu reference needs input '{}'", name));
    return it->second;
  };
  HostTensors out;
  if (split(problem)) {
    out["out"] = swiglu_f64(need("gate"), need("up"));
  } else {
    std::vector<double> gate;
    std::vector<double> up;
    split_gate_up(need("x"), problem.dim("m"), problem.dim("i"), gate, up);
    out["out"] = swiglu_f64(gate, up);
  }
  return out;
}

Config SwigluSpec::default_config(const Problem& problem) const {
  return {"elementwise", {{"THREADS", 256}, {"VEC", vec16(problem.dtype)}, {"ITEMS", 1}}};
}

std::vector<std::string> SwigluSpec::layouts() const { return swiglu_modes(); }

}  // namespace ktune::kernel_templates
