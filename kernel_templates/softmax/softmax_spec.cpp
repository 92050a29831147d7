#include "kernel_templates/softmax/softmax_spec.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kernel_templates/ops_spec_util.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using namespace ops_detail;

const std::vector<std::string>& softmax_modes() {
  static const std::vector<std::string> kModes = {"", "causal", "padding"};
  return kModes;
}

/// Dynamic shared memory the staged row may take: sm_90's 227 KB (232448 bytes) a block, static
/// and dynamic together, less the reduction scratch of up to 1024 threads (32 floats).
constexpr int64_t kMaxStagedBytes = 232448 - 128;
/// Blocks a row in split mode: the finishing blocks read every partial of their row (from L2).
constexpr int64_t kMaxSplit = 64;

std::string type_args(const Problem& p, const Config& c) {
  return fmt::format("{},{},{},{}", c.at("THREADS"), c.at("VEC"), SoftmaxSpec::mask_code(p),
                     ktune::cuda_type_name(p.dtype));
}

std::vector<ArgSpec> softmax_args(const Problem& p, const char* out, bool padding) {
  return {ArgSpec::of_tensor("x"),
          ArgSpec::of_tensor(out),
          padding ? ArgSpec::of_tensor("lengths") : ArgSpec::null_pointer(),
          ArgSpec::i32(static_cast<int32_t>(p.dim("rows"))),
          ArgSpec::i32(static_cast<int32_t>(p.dim("cols"))),
          ArgSpec::f32(SoftmaxSpec::kScale),
          ArgSpec::i32(static_cast<int32_t>(SoftmaxSpec::row_offset(p)))};
}

}  // namespace

SoftmaxMask SoftmaxSpec::mask(const Problem& problem) {
  const auto m = parse_mode(problem.layout, softmax_modes());
  if (!m) {
    throw Error(
        ErrorKind::kBadInput,
        fmt::format("softmax mode '{}' is none of '' (no mask), 'causal', 'padding'", problem.layout));
  }
  return *m == "causal" ? SoftmaxMask::kCausal : *m == "padding" ? SoftmaxMask::kPadding : SoftmaxMask::kNone;
}

int64_t SoftmaxSpec::row_offset(const Problem& problem) {
  return std::max<int64_t>(problem.dim("cols") - problem.dim("rows"), 0);
}

int64_t SoftmaxSpec::chunks(int64_t cols, const Config& config) {
  return ceil_div(cols, config.at("THREADS") * config.at("VEC"));
}

int64_t SoftmaxSpec::split(const Config& config) { return config.find("SPLIT").value_or(1); }

int64_t SoftmaxSpec::segment(int64_t cols, const Config& config) {
  const int64_t vec = config.at("VEC");
  return ceil_div(ceil_div(cols, split(config)), vec) * vec;
}

int64_t SoftmaxSpec::staged_bytes(const Problem& problem) {
  return ceil_div(problem.dim("cols") * static_cast<int64_t>(ktune::size_of(problem.dtype)), 16) * 16;
}

int SoftmaxSpec::mask_code(const Problem& problem) {
  const SoftmaxMask m = mask(problem);
  return m == SoftmaxMask::kNone ? 0 : m == SoftmaxMask::kCausal ? 1 : 2;
}

std::string SoftmaxSpec::name_prefix(const Problem& problem) {
  const std::string mode = parse_mode(problem.layout, softmax_modes()).value_or(problem.layout);
  return fmt::format("softmax.{}{}{}", ktune::to_string(problem.dtype), mode.empty() ? "" : ".", mode);
}

std::vector<TensorSpec> SoftmaxSpec::tensors(const Problem& problem) {
  const int64_t rows = problem.dim("rows");
  const int64_t n = rows * problem.dim("cols");
  std::vector<TensorSpec> out;
  out.push_back({"x", TensorRole::kInput, problem.dtype, n});
  if (mask(problem) == SoftmaxMask::kPadding) {
    out.push_back({"lengths", TensorRole::kInput, DType::kF32, rows});  // int32 values
  }
  out.push_back({"y", TensorRole::kOutput, problem.dtype, n});
  return out;
}

std::vector<ArgSpec> SoftmaxSpec::launch_args(const Problem& problem, const char* out) {
  return softmax_args(problem, out, mask(problem) == SoftmaxMask::kPadding);
}

std::optional<std::string> SoftmaxSpec::problem_rejection(const Problem& problem) const {
  if (auto why = dims_rejection(kernel(), problem, dims())) return why;
  if (auto why = dtype_rejection(kernel(), problem.dtype)) return why;
  if (!parse_mode(problem.layout, softmax_modes())) {
    return fmt::format("softmax mode '{}' is none of '' (no mask), 'causal', 'padding'", problem.layout);
  }
  return std::nullopt;
}

std::optional<std::string> SoftmaxSpec::rejection(const Problem& problem, const Config& config) const {
  if (auto why = problem_rejection(problem)) return why;
  // SPLIT may be absent (configs stored before it existed): it reads as 1.
  Config full = config;
  if (!full.find("SPLIT")) full.set("SPLIT", 1);
  if (auto why = params_rejection(variant(), full, param_names())) return why;
  const int64_t threads = config.at("THREADS");
  const int64_t rows = config.at("ROWS");
  if (threads < 32 || threads % 32 != 0) return fmt::format("THREADS={} is not a multiple of 32", threads);
  if (rows < 1 || threads * rows > kMaxThreads) {
    return fmt::format("THREADS*ROWS={} is outside [32, {}]", threads * rows, kMaxThreads);
  }
  if (auto why = vec_rejection(config.at("VEC"), problem.dtype)) return why;
  const int64_t online = config.at("ONLINE");
  if (online > 2) return fmt::format("ONLINE={} is none of 0, 1, 2", online);
  if (online == 2 && rows != 1)
    return fmt::format("ONLINE=2 stages one row a block: ROWS must be 1, not {}", rows);
  if (online == 2 && staged_bytes(problem) > kMaxStagedBytes) {
    return fmt::format("ONLINE=2 stages {} bytes of shared memory a row for cols={} (at most {}): use SPLIT",
                       staged_bytes(problem), problem.dim("cols"), kMaxStagedBytes);
  }
  const int64_t sp = split(config);
  if (sp < 1 || sp > kMaxSplit) return fmt::format("SPLIT={} is outside [1, {}]", sp, kMaxSplit);
  if (sp > 1 && (online != 1 || rows != 1)) {
    return fmt::format("SPLIT={} needs ONLINE=1 and ROWS=1 (got ONLINE={}, ROWS={})", sp, online, rows);
  }
  if (sp > 1 && problem.dim("rows") > kMaxGridY) {
    return fmt::format("SPLIT={} puts rows on grid.y: rows={} exceeds {}", sp, problem.dim("rows"),
                       kMaxGridY);
  }
  const int64_t elem_bytes = static_cast<int64_t>(ktune::size_of(problem.dtype));
  const int64_t row_bytes = chunks(problem.dim("cols"), config) * config.at("VEC") * elem_bytes;
  if (online == 0 && row_bytes > kMaxRegisterBytes) {
    return fmt::format(
        "one-pass softmax keeps {} bytes of the row a thread for cols={} (at most {}): use ONLINE=1",
        row_bytes, problem.dim("cols"), kMaxRegisterBytes);
  }
  return std::nullopt;
}

std::string SoftmaxSpec::canonical_name(const Problem& problem, const Config& config) const {
  const bool has_split = config.find("SPLIT").has_value();
  return fmt::format("{}.t{}.r{}.v{}.on{}{}", name_prefix(problem), config.at("THREADS"), config.at("ROWS"),
                     config.at("VEC"), config.at("ONLINE"),
                     has_split ? fmt::format(".s{}", split(config)) : "");
}

CompileSpec SoftmaxSpec::compile_spec(const Problem& problem, const Config& config) const {
  throw_if(rejection(problem, config));
  CompileSpec spec;
  spec.source_name = std::string(source_name());
  spec.options = {"-std=c++17"};
  if (split(config) > 1) {
    spec.name_expressions = {fmt::format("ktune_softmax_partial<{}>", type_args(problem, config)),
                             fmt::format("ktune_softmax_split_finish<{}>", type_args(problem, config))};
    return spec;
  }
  if (config.at("ONLINE") == 2) {
    spec.name_expressions = {fmt::format("ktune_softmax_staged<{}>", type_args(problem, config))};
    return spec;
  }
  const int64_t c = config.at("ONLINE") == 1 ? 0 : chunks(problem.dim("cols"), config);
  spec.name_expressions = {fmt::format("ktune_softmax<{},{},{},{},{},{}>", config.at("THREADS"),
                                       config.at("ROWS"), config.at("VEC"), c, mask_code(problem),
                                       ktune::cuda_type_name(problem.dtype))};
  return spec;
}

LaunchPlan SoftmaxSpec::launch_plan(const Problem& problem, const Config& config) const {
  const CompileSpec c = compile_spec(problem, config);
  const int64_t rows = problem.dim("rows");
  const bool padding = mask(problem) == SoftmaxMask::kPadding;
  LaunchPlan p;
  p.tensors = tensors(problem);
  const int64_t sp = split(config);
  if (sp > 1) {
    // Two launches over grid (SPLIT, rows): partial (max, sum) of each segment, then the output.
    p.tensors.push_back({"partials", TensorRole::kWorkspace, DType::kF32, rows * sp * 2});
    const auto seg = ArgSpec::i32(static_cast<int32_t>(segment(problem.dim("cols"), config)));
    std::vector<ArgSpec> base = softmax_args(problem, "y", padding);
    KernelLaunch partial;
    partial.name_expression = c.name_expressions[0];
    partial.dims.grid = {u32(sp), u32(rows), 1};
    partial.dims.block = {u32(config.at("THREADS")), 1, 1};
    partial.args = {base[0], ArgSpec::of_tensor("partials"), base[2], base[3], base[4], base[5], base[6],
                    seg};
    KernelLaunch finish = partial;
    finish.name_expression = c.name_expressions[1];
    finish.args = {
        base[0], ArgSpec::of_tensor("partials"), base[1], base[2], base[3], base[4], base[5], base[6], seg};
    p.launches = {partial, finish};
    return p;
  }
  KernelLaunch l;
  l.name_expression = c.name_expressions.front();
  l.dims.grid = {u32(ceil_div(rows, config.at("ROWS"))), 1, 1};
  l.dims.block = {u32(config.at("THREADS") * config.at("ROWS")), 1, 1};
  if (config.at("ONLINE") == 2) l.dims.dynamic_smem_bytes = u32(staged_bytes(problem));
  l.args = softmax_args(problem, "y", padding);
  p.launches.push_back(l);
  return p;
}

WorkCounts SoftmaxSpec::work(const Problem& problem) const {
  const double rows = static_cast<double>(problem.dim("rows"));
  const double n = rows * static_cast<double>(problem.dim("cols"));
  const double es = static_cast<double>(ktune::size_of(problem.dtype));
  const double lengths = mask(problem) == SoftmaxMask::kPadding ? 4.0 * rows : 0.0;
  // scale, max, subtract, exp2, sum, multiply: ~5 flops an element (exp2 counted as one).
  return {5.0 * n, 2.0 * n * es + lengths};
}

std::vector<AlignmentRule> SoftmaxSpec::alignment(const Problem& problem, const Config& config) const {
  const int64_t bytes = config.at("VEC") * static_cast<int64_t>(ktune::size_of(problem.dtype));
  const std::string note = fmt::format(
      "{}-byte vector access of a row when its x and y are {}-byte aligned (all rows: cols % VEC == 0); "
      "otherwise the per-element path",
      bytes, bytes);
  std::vector<AlignmentRule> out = {{"x", bytes, false, note}, {"y", bytes, false, note}};
  if (mask(problem) == SoftmaxMask::kPadding) out.push_back({"lengths", 4, true, "int32 lengths"});
  return out;
}

ReferenceSpec SoftmaxSpec::reference(const Problem& problem) const {
  throw_if(problem_rejection(problem));
  const int64_t rows = problem.dim("rows");
  const int64_t n = rows * problem.dim("cols");
  const bool padding = mask(problem) == SoftmaxMask::kPadding;
  constexpr int64_t kRowsPerBlock = 4;  // softmax_reference.cu: a warp a row, 128 threads
  ReferenceSpec r;
  r.compile.source_name = "softmax_reference.cu";
  const std::string expr =
      fmt::format("ktune_softmax_reference<{},{}>", ktune::cuda_type_name(problem.dtype), mask_code(problem));
  r.compile.name_expressions = {expr};
  r.compile.options = {"-std=c++17"};
  r.plan.tensors.push_back({"x", TensorRole::kInput, problem.dtype, n});
  if (padding) r.plan.tensors.push_back({"lengths", TensorRole::kInput, DType::kF32, rows});
  r.plan.tensors.push_back({"y_ref", TensorRole::kOutput, DType::kF32, n});
  KernelLaunch l;
  l.name_expression = expr;
  l.dims.grid = {u32(ceil_div(rows, kRowsPerBlock)), 1, 1};
  l.dims.block = {u32(32 * kRowsPerBlock), 1, 1};
  l.args = softmax_args(problem, "y_ref", padding);
  r.plan.launches = {l};
  r.compare = {{"y", "y_ref"}};
  return r;
}

HostTensors SoftmaxSpec::cpu_reference(const Problem& problem, const HostTensors& inputs) const {
  throw_if(problem_rejection(problem));
  const auto x = inputs.find("x");
  if (x == inputs.end()) throw Error(ErrorKind::kBadInput, "softmax cpu reference needs input 'x'");
  std::vector<int32_t> lengths;
  if (mask(problem) == SoftmaxMask::kPadding) {
    const auto l = inputs.find("lengths");
    if (l == inputs.end()) throw Error(ErrorKind::kBadInput, "softmax cpu reference needs input 'lengths'");
    for (double v : l->second) lengths.push_back(static_cast<int32_t>(static_cast<int64_t>(v)));
  }
  HostTensors out;
  out["y"] = softmax_f64(x->second, problem.dim("rows"), problem.dim("cols"), kScale, mask(problem),
                         row_offset(problem), lengths);
  return out;
}

Config SoftmaxSpec::default_config(const Problem& problem) const {
  // No SPLIT: the name and behaviour of the default from before SPLIT existed.
  return {"rowwise", {{"THREADS", 256}, {"ROWS", 1}, {"VEC", vec16(problem.dtype)}, {"ONLINE", 1}}};
}

std::vector<std::string> SoftmaxSpec::layouts() const { return softmax_modes(); }

}  // namespace ktune::kernel_templates
