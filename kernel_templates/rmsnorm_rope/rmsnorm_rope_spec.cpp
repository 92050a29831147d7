#include "kernel_templates/rmsnorm_rope/rmsnorm_rope_spec.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kernel_templates/ops_spec_util.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using namespace ops_detail;

const std::vector<std::string>& rope_modes() {
  static const std::vector<std::string> kModes = {"neox", "gptj"};
  return kModes;
}

const std::vector<double>& rope_input(const HostTensors& inputs, const char* name) {
  const auto it = inputs.find(name);
  if (it == inputs.end()) {
    throw Error(ErrorKind::kBadInput, fmt::format("rmsnorm_rope cpu reference needs input '{}'", name));
  }
  return it->second;
}

std::vector<TensorSpec> rope_input_tensors(const Problem& p) {
  const int64_t t = p.dim("tokens");
  const int64_t d = p.dim("head_dim");
  return {
      {"q", TensorRole::kInput, p.dtype, t * p.dim("heads_q") * d},
      {"k", TensorRole::kInput, p.dtype, t * p.dim("heads_kv") * d},
      {"q_weight", TensorRole::kInput, p.dtype, d},
      {"k_weight", TensorRole::kInput, p.dtype, d},
      {"cos_sin", TensorRole::kInput, DType::kF32, RmsNormRopeSpec::kMaxPos * d},
      {"positions", TensorRole::kInput, DType::kF32, t},  // int32 values (see the header)
  };
}

std::vector<ArgSpec> common_args() {
  return {ArgSpec::of_tensor("q"),        ArgSpec::of_tensor("k"),       ArgSpec::of_tensor("q_weight"),
          ArgSpec::of_tensor("k_weight"), ArgSpec::of_tensor("cos_sin"), ArgSpec::of_tensor("positions")};
}

}  // namespace

RopeStyle RmsNormRopeSpec::style(const Problem& problem) {
  const auto mode = parse_mode(problem.layout, rope_modes());
  if (!mode)
    throw Error(ErrorKind::kBadInput,
                fmt::format("rmsnorm_rope mode '{}' is neither 'neox' nor 'gptj'", problem.layout));
  return *mode == "gptj" ? RopeStyle::kGptj : RopeStyle::kNeox;
}

std::optional<std::string> RmsNormRopeSpec::problem_rejection(const Problem& problem) const {
  if (auto why = dims_rejection(kernel(), problem, dims())) return why;
  if (auto why = dtype_rejection(kernel(), problem.dtype)) return why;
  if (!parse_mode(problem.layout, rope_modes())) {
    return fmt::format("rmsnorm_rope mode '{}' is neither 'neox' nor 'gptj'", problem.layout);
  }
  const int64_t d = problem.dim("head_dim");
  if (d % 2 != 0) return fmt::format("rmsnorm_rope needs an even head_dim (rotary pairs), not {}", d);
  if (d != 64 && d != 128 && d != 256) {
    return fmt::format("rmsnorm_rope supports head_dim 64, 128 and 256, not {}", d);
  }
  const int64_t items = problem.dim("tokens") * (problem.dim("heads_q") + problem.dim("heads_kv"));
  if (items > kMaxDim) return fmt::format("tokens*(heads_q+heads_kv)={} exceeds {}", items, kMaxDim);
  return std::nullopt;
}

std::optional<std::string> RmsNormRopeSpec::rejection(const Problem& problem, const Config& config) const {
  if (auto why = problem_rejection(problem)) return why;
  if (auto why = params_rejection(variant(), config, param_names())) return why;
  const int64_t lanes = config.at("THREADS");
  const int64_t heads = config.at("HEADS");
  const int64_t vec = config.at("VEC");
  const int64_t items = config.at("ITEMS");
  if (!is_pow2(lanes) || lanes > 32) return fmt::format("THREADS={} is not a power of two <= 32", lanes);
  if (items != 1 && items != 2 && items != 4) return fmt::format("ITEMS={} is not 1, 2 or 4", items);
  if (heads < 1 || (lanes * heads) % 32 != 0 || lanes * heads > kMaxThreads) {
    return fmt::format("THREADS*HEADS={} is not a multiple of 32 in [32, {}]", lanes * heads, kMaxThreads);
  }
  const int64_t occ = config.at("OCC");
  if (occ < 0 || occ > kMaxThreadsPerSm || occ % (lanes * heads) != 0 ||
      occ / (lanes * heads) > kMaxBlocksPerSm) {
    return fmt::format(
        "OCC={} is not 0 or whole blocks of {} threads an SM (at most {} blocks and {} threads an SM)", occ,
        lanes * heads, kMaxBlocksPerSm, kMaxThreadsPerSm);
  }
  if (auto why = vec_rejection(vec, problem.dtype)) return why;
  if (vec < 2) return std::string("VEC must be even (GPT-J pairs lie within one vector)");
  const int64_t half = problem.dim("head_dim") / 2;
  if (half % (lanes * vec) != 0) {
    return fmt::format("head_dim/2={} is not a multiple of THREADS*VEC={}", half, lanes * vec);
  }
  return std::nullopt;
}

std::string RmsNormRopeSpec::canonical_name(const Problem& problem, const Config& config) const {
  const auto mode = parse_mode(problem.layout, rope_modes()).value_or(problem.layout);
  return fmt::format("rmsnorm_rope.{}.{}.t{}.h{}.v{}.i{}.o{}", ktune::to_string(problem.dtype), mode,
                     config.at("THREADS"), config.at("HEADS"), config.at("VEC"), config.at("ITEMS"),
                     config.at("OCC"));
}

CompileSpec RmsNormRopeSpec::compile_spec(const Problem& problem, const Config& config) const {
  throw_if(rejection(problem, config));
  CompileSpec c;
  c.source_name = std::string(source_name());
  c.name_expressions = {fmt::format(
      "ktune_rmsnorm_rope<{},{},{},{},{},{},{},{}>", problem.dim("head_dim"), config.at("THREADS"),
      config.at("VEC"), config.at("HEADS"), config.at("ITEMS"), config.at("OCC"),
      style(problem) == RopeStyle::kGptj ? "true" : "false", ktune::cuda_type_name(problem.dtype))};
  c.options = {"-std=c++17"};
  return c;
}

std::vector<TensorSpec> RmsNormRopeSpec::tensors(const Problem& problem) {
  const int64_t t = problem.dim("tokens");
  const int64_t d = problem.dim("head_dim");
  std::vector<TensorSpec> out = rope_input_tensors(problem);
  out.push_back({"q_out", TensorRole::kOutput, problem.dtype, t * problem.dim("heads_q") * d});
  out.push_back({"k_out", TensorRole::kOutput, problem.dtype, t * problem.dim("heads_kv") * d});
  return out;
}

std::vector<ArgSpec> RmsNormRopeSpec::launch_args(const Problem& problem) {
  std::vector<ArgSpec> args = common_args();
  for (const ArgSpec& a : {ArgSpec::of_tensor("q_out"), ArgSpec::of_tensor("k_out"),
                           ArgSpec::i32(static_cast<int32_t>(problem.dim("tokens"))),
                           ArgSpec::i32(static_cast<int32_t>(problem.dim("heads_q"))),
                           ArgSpec::i32(static_cast<int32_t>(problem.dim("heads_kv"))),
                           ArgSpec::i32(static_cast<int32_t>(kMaxPos)), ArgSpec::f32(kEps)}) {
    args.push_back(a);
  }
  return args;
}

LaunchPlan RmsNormRopeSpec::launch_plan(const Problem& problem, const Config& config) const {
  const CompileSpec c = compile_spec(problem, config);
  const int64_t t = problem.dim("tokens");
  const int64_t hq = problem.dim("heads_q");
  const int64_t hk = problem.dim("heads_kv");
  LaunchPlan p;
  p.tensors = tensors(problem);
  KernelLaunch l;
  l.name_expression = c.name_expressions.front();
  l.dims.grid = {u32(ceil_div(t * (hq + hk), config.at("HEADS") * config.at("ITEMS"))), 1, 1};
  l.dims.block = {u32(config.at("THREADS") * config.at("HEADS")), 1, 1};
  l.args = launch_args(problem);
  p.launches.push_back(l);
  return p;
}

WorkCounts RmsNormRopeSpec::work(const Problem& problem) const {
  const double t = static_cast<double>(problem.dim("tokens"));
  const double d = static_cast<double>(problem.dim("head_dim"));
  const double n = t * static_cast<double>(problem.dim("heads_q") + problem.dim("heads_kv")) * d;
  const double es = static_cast<double>(ktune::size_of(problem.dtype));
  const double table_rows = std::min(t, static_cast<double>(kMaxPos));
  // Per element: square-add, scale, weight, and a rotation (2 mul + 1 fma) -> 6.
  return {6.0 * n, 2.0 * n * es + 2.0 * d * es + 4.0 * t + table_rows * d * 4.0};
}

std::vector<AlignmentRule> RmsNormRopeSpec::alignment(const Problem& problem, const Config& config) const {
  const int64_t bytes = config.at("VEC") * static_cast<int64_t>(ktune::size_of(problem.dtype));
  const std::string note = fmt::format(
      "{}-byte vector access when q, k, q_out, k_out and both weights are {}-byte aligned; otherwise the "
      "per-element path",
      bytes, bytes);
  std::vector<AlignmentRule> out;
  for (const char* t : {"q", "k", "q_weight", "k_weight", "q_out", "k_out"})
    out.push_back({t, bytes, false, note});
  out.push_back({"cos_sin", 4, true, "f32 table"});
  out.push_back({"positions", 4, true, "int32 positions"});
  return out;
}

ReferenceSpec RmsNormRopeSpec::reference(const Problem& problem) const {
  throw_if(problem_rejection(problem));
  const int64_t t = problem.dim("tokens");
  const int64_t hq = problem.dim("heads_q");
  const int64_t hk = problem.dim("heads_kv");
  const int64_t d = problem.dim("head_dim");
  constexpr int64_t kThreads = 128;  // rmsnorm_rope_reference.cu: a thread a head
  ReferenceSpec r;
  r.compile.source_name = "rmsnorm_rope_reference.cu";
  const std::string expr =
      fmt::format("ktune_rmsnorm_rope_reference<{},{}>", ktune::cuda_type_name(problem.dtype),
                  style(problem) == RopeStyle::kGptj ? "true" : "false");
  r.compile.name_expressions = {expr};
  r.compile.options = {"-std=c++17"};
  r.plan.tensors = rope_input_tensors(problem);
  r.plan.tensors.push_back({"q_ref", TensorRole::kOutput, DType::kF32, t * hq * d});
  r.plan.tensors.push_back({"k_ref", TensorRole::kOutput, DType::kF32, t * hk * d});
  KernelLaunch l;
  l.name_expression = expr;
  l.dims.grid = {u32(ceil_div(t * (hq + hk), kThreads)), 1, 1};
  l.dims.block = {u32(kThreads), 1, 1};
  l.args = common_args();
  for (const ArgSpec& a : {ArgSpec::of_tensor("q_ref"), ArgSpec::of_tensor("k_ref"),
                           ArgSpec::i32(static_cast<int32_t>(t)), ArgSpec::i32(static_cast<int32_t>(hq)),
                           ArgSpec::i32(static_cast<int32_t>(hk)), ArgSpec::i32(static_cast<int32_t>(d)),
                           ArgSpec::i32(static_cast<int32_t>(kMaxPos)), ArgSpec::f32(kEps)}) {
    l.args.push_back(a);
  }
  r.plan.launches = {l};
  r.compare = {{"q_out", "q_ref"}, {"k_out", "k_ref"}};
  return r;
}

HostTensors RmsNormRopeSpec::cpu_reference(const Problem& problem, const HostTensors& inputs) const {
  throw_if(problem_rejection(problem));
  const int64_t t = problem.dim("tokens");
  const int64_t d = problem.dim("head_dim");
  const auto& pos_values = rope_input(inputs, "positions");
  std::vector<int32_t> positions(pos_values.size());
  std::transform(pos_values.begin(), pos_values.end(), positions.begin(),
                 [](double v) { return static_cast<int32_t>(static_cast<int64_t>(v)); });
  const int64_t max_pos = static_cast<int64_t>(rope_input(inputs, "cos_sin").size()) / d;
  HostTensors out;
  out["q_out"] =
      rmsnorm_rope_f64(rope_input(inputs, "q"), rope_input(inputs, "q_weight"), rope_input(inputs, "cos_sin"),
                       positions, t, problem.dim("heads_q"), d, max_pos, style(problem), kEps);
  out["k_out"] =
      rmsnorm_rope_f64(rope_input(inputs, "k"), rope_input(inputs, "k_weight"), rope_input(inputs, "cos_sin"),
                       positions, t, problem.dim("heads_kv"), d, max_pos, style(problem), kEps);
  return out;
}

Config RmsNormRopeSpec::default_config(const Problem&) const {
  return {"headwise", {{"THREADS", 16}, {"HEADS", 8}, {"VEC", 2}, {"ITEMS", 1}, {"OCC", 0}}};
}

std::vector<std::string> RmsNormRopeSpec::layouts() const { return rope_modes(); }

}  // namespace ktune::kernel_templates
