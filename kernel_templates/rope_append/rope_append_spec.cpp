#include "kernel_templates/rope_append/rope_append_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "kernel_templates/ops_spec_util.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using namespace ops_detail;

const std::vector<double>& input(const HostTensors& inputs, const char* name) {
  const auto it = inputs.find(name);
  if (it == inputs.end()) {
    throw Error(ErrorKind::kBadInput, fmt::format("rope_append cpu reference needs input '{}'", name));
  }
  return it->second;
}

std::vector<int32_t> int32_values(const std::vector<double>& v) {
  std::vector<int32_t> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(),
                 [](double x) { return static_cast<int32_t>(static_cast<int64_t>(x)); });
  return out;
}

/// A step coprime with n, so i * step mod n is a permutation of [0, n): the block table scatters
/// the tokens' blocks over the cache.
int64_t coprime_step(int64_t n) {
  for (const int64_t step : {7919, 7907, 7901, 7883, 7879}) {
    if (std::gcd(step, n) == 1) return step;
  }
  return 1;  // n a multiple of all five primes: the identity
}

std::vector<TensorSpec> input_tensors(const Problem& p, const RopeAppendSpec::Mode& mode) {
  const int64_t t = p.dim("tokens");
  const int64_t d = p.dim("head_dim");
  const int64_t kv = t * p.dim("heads_kv") * d;
  std::vector<TensorSpec> out = {
      {"q", TensorRole::kInput, p.dtype, t * p.dim("heads_q") * d},
      {"k", TensorRole::kInput, p.dtype, kv},
      {"v", TensorRole::kInput, p.dtype, kv},
  };
  if (mode.norm) {
    out.push_back({"q_weight", TensorRole::kInput, p.dtype, d});
    out.push_back({"k_weight", TensorRole::kInput, p.dtype, d});
  }
  out.push_back({"cos_sin", TensorRole::kInput, DType::kF32, RopeAppendSpec::kMaxPos * p.dim("rot_dim")});
  TensorSpec positions{"positions", TensorRole::kInput, DType::kF32, t};
  positions.integer = IntType::kI32;
  positions.fill = BufferFill::range(0, 3 * RopeAppendSpec::kMaxPos);  // past the table: taken modulo
  out.push_back(positions);
  if (mode.paged) {
    TensorSpec table{"block_table", TensorRole::kInput, DType::kF32, t};
    table.integer = IntType::kI32;
    table.fill = BufferFill::sequence(t / 3, coprime_step(t), t);
    out.push_back(table);
  }
  return out;
}

std::vector<ArgSpec> tensor_args(const RopeAppendSpec::Mode& mode,
                                 std::initializer_list<const char*> outputs) {
  std::vector<ArgSpec> args = {ArgSpec::of_tensor("q"), ArgSpec::of_tensor("k"), ArgSpec::of_tensor("v")};
  args.push_back(mode.norm ? ArgSpec::of_tensor("q_weight") : ArgSpec::null_pointer());
  args.push_back(mode.norm ? ArgSpec::of_tensor("k_weight") : ArgSpec::null_pointer());
  args.push_back(ArgSpec::of_tensor("cos_sin"));
  args.push_back(ArgSpec::of_tensor("positions"));
  args.push_back(mode.paged ? ArgSpec::of_tensor("block_table") : ArgSpec::null_pointer());
  for (const char* o : outputs) args.push_back(ArgSpec::of_tensor(o));
  return args;
}

/// The call geometry, max_pos and eps after the dims (RopeAppendSpec::kSignature).
void append_geometry(std::vector<ArgSpec>& args) {
  for (const int64_t v :
       {int64_t{1}, int64_t{1}, int64_t{1}, RopeAppendSpec::kTunedNumBlocks, RopeAppendSpec::kMaxPos}) {
    args.push_back(ArgSpec::i32(static_cast<int32_t>(v)));
  }
  args.push_back(ArgSpec::f32(RopeAppendSpec::kEps));
}

RopeAppendSpec::Mode mode_of(const Problem& problem) {
  const auto mode = RopeAppendSpec::parse_mode(problem.layout);
  if (!mode) throw Error(ErrorKind::kBadInput, fmt::format("rope_append: unknown mode '{}'", problem.layout));
  return *mode;
}

}  // namespace

std::vector<std::string> RopeAppendSpec::layouts() const {
  std::vector<std::string> out;
  for (int code = 0; code < 8; ++code) {
    out.push_back(
        mode_text({code % 2 == 1 ? RopeStyle::kGptj : RopeStyle::kNeox, (code / 2) % 2 == 1, code / 4 == 1}));
  }
  return out;
}

std::optional<RopeAppendSpec::Mode> RopeAppendSpec::parse_mode(std::string_view layout) {
  if (layout.empty()) return Mode{};
  for (int code = 0; code < 8; ++code) {
    const Mode m{code % 2 == 1 ? RopeStyle::kGptj : RopeStyle::kNeox, (code / 2) % 2 == 1, code / 4 == 1};
    if (layout == mode_text(m)) return m;
  }
  return std::nullopt;
}

std::string RopeAppendSpec::mode_text(const Mode& mode) {
  std::string out = mode.style == RopeStyle::kGptj ? "gptj" : "neox";
  if (mode.norm) out += "+norm";
  if (mode.paged) out += "+paged";
  return out;
}

KvCacheGeometry RopeAppendSpec::tuned_geometry(const Problem& problem) {
  const Mode mode = mode_of(problem);
  return {1, 1, mode.paged, 1, mode.paged ? problem.dim("tokens") : 1};
}

std::optional<std::string> RopeAppendSpec::problem_rejection(const Problem& problem) const {
  if (auto why = dims_rejection(kernel(), problem, dims())) return why;
  if (auto why = dtype_rejection(kernel(), problem.dtype)) return why;
  if (!parse_mode(problem.layout)) {
    return fmt::format("rope_append mode '{}' is not one of neox|gptj[+norm][+paged]", problem.layout);
  }
  const int64_t d = problem.dim("head_dim");
  const int64_t r = problem.dim("rot_dim");
  if (d % 16 != 0 || d > kMaxHeadDim) {
    return fmt::format("rope_append needs head_dim a multiple of 16 up to {}, not {}", kMaxHeadDim, d);
  }
  if (r % 16 != 0 || r > d) {
    return fmt::format("rope_append needs rot_dim a multiple of 16 within head_dim={}, not {}", d, r);
  }
  const int64_t items = problem.dim("tokens") * (problem.dim("heads_q") + 2 * problem.dim("heads_kv"));
  if (items > kMaxDim) return fmt::format("tokens*(heads_q+2*heads_kv)={} exceeds {}", items, kMaxDim);
  return std::nullopt;
}

std::optional<std::string> RopeAppendSpec::rejection(const Problem& problem, const Config& config) const {
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
  if (auto why = vec_rejection(vec, problem.dtype)) return why;
  if (vec < 2) return std::string("VEC must be even (GPT-J pairs lie within one vector)");
  // A lane group holds its ITEMS heads in registers, packed as T, until it stores them.
  const int64_t held =
      items * problem.dim("head_dim") * static_cast<int64_t>(ktune::size_of(problem.dtype)) / lanes;
  if (held > kMaxHeldBytes) {
    return fmt::format("ITEMS*head_dim/THREADS holds {} bytes a thread (at most {})", held, kMaxHeldBytes);
  }
  const int64_t half = problem.dim("rot_dim") / 2;
  const int64_t tail = problem.dim("head_dim") - problem.dim("rot_dim");
  if (half % (lanes * vec) != 0 || tail % (lanes * vec) != 0) {
    return fmt::format("rot_dim/2={} and head_dim-rot_dim={} are not multiples of THREADS*VEC={}", half, tail,
                       lanes * vec);
  }
  return std::nullopt;
}

std::string RopeAppendSpec::canonical_name(const Problem& problem, const Config& config) const {
  std::string mode = parse_mode(problem.layout) ? mode_text(*parse_mode(problem.layout)) : problem.layout;
  std::replace(mode.begin(), mode.end(), '+', '_');
  return fmt::format("rope_append.{}.{}.t{}.h{}.v{}.i{}", ktune::to_string(problem.dtype), mode,
                     config.at("THREADS"), config.at("HEADS"), config.at("VEC"), config.at("ITEMS"));
}

CompileSpec RopeAppendSpec::compile_spec(const Problem& problem, const Config& config) const {
  throw_if(rejection(problem, config));
  const Mode mode = mode_of(problem);
  CompileSpec c;
  c.source_name = std::string(source_name());
  c.name_expressions = {fmt::format("ktune_rope_append<{},{},{},{},{},{},{},{},{},{}>",
                                    problem.dim("head_dim"), problem.dim("rot_dim"), config.at("THREADS"),
                                    config.at("VEC"), config.at("HEADS"), config.at("ITEMS"),
                                    cpp_bool(mode.style == RopeStyle::kGptj), cpp_bool(mode.norm),
                                    cpp_bool(mode.paged), ktune::cuda_type_name(problem.dtype))};
  c.options = {"-std=c++17"};
  return c;
}

LaunchPlan RopeAppendSpec::launch_plan(const Problem& problem, const Config& config) const {
  const CompileSpec c = compile_spec(problem, config);
  const Mode mode = mode_of(problem);
  const int64_t t = problem.dim("tokens");
  const int64_t hq = problem.dim("heads_q");
  const int64_t hk = problem.dim("heads_kv");
  const int64_t kv = t * hk * problem.dim("head_dim");
  LaunchPlan p;
  p.tensors = input_tensors(problem, mode);
  p.tensors.push_back({"q_out", TensorRole::kOutput, problem.dtype, t * hq * problem.dim("head_dim")});
  p.tensors.push_back({"k_cache", TensorRole::kOutput, problem.dtype, kv});
  p.tensors.push_back({"v_cache", TensorRole::kOutput, problem.dtype, kv});
  KernelLaunch l;
  l.name_expression = c.name_expressions.front();
  l.dims.grid = {u32(ceil_div(t * (hq + 2 * hk), config.at("HEADS") * config.at("ITEMS"))), 1, 1};
  l.dims.block = {u32(config.at("THREADS") * config.at("HEADS")), 1, 1};
  l.args = tensor_args(mode, {"q_out", "k_cache", "v_cache"});
  for (const int64_t v : {t, hq, hk}) l.args.push_back(ArgSpec::i32(static_cast<int32_t>(v)));
  append_geometry(l.args);
  p.launches.push_back(l);
  return p;
}

WorkCounts RopeAppendSpec::work(const Problem& problem) const {
  const Mode mode = mode_of(problem);
  const double t = static_cast<double>(problem.dim("tokens"));
  const double d = static_cast<double>(problem.dim("head_dim"));
  const double r = static_cast<double>(problem.dim("rot_dim"));
  const double hq = static_cast<double>(problem.dim("heads_q"));
  const double hk = static_cast<double>(problem.dim("heads_kv"));
  const double es = static_cast<double>(ktune::size_of(problem.dtype));
  const double rotated = t * (hq + hk);
  const double table_rows = std::min(t, static_cast<double>(kMaxPos));
  // A rotated element: 2 mul + 1 fma (3); with the norm, square-add, scale and weight (3 more).
  const double flops = rotated * (3.0 * r + (mode.norm ? 3.0 * d : 0.0));
  const double bytes = 2.0 * t * (hq + 2.0 * hk) * d * es + (mode.norm ? 2.0 * d * es : 0.0) +
                       t * (mode.paged ? 8.0 : 4.0) + table_rows * r * 4.0;
  return {flops, bytes};
}

std::vector<AlignmentRule> RopeAppendSpec::alignment(const Problem& problem, const Config& config) const {
  const Mode mode = mode_of(problem);
  const int64_t bytes = config.at("VEC") * static_cast<int64_t>(ktune::size_of(problem.dtype));
  const std::string note = fmt::format(
      "{}-byte vector access when q, k, v, q_out, both caches (and the weights) are {}-byte aligned; "
      "otherwise "
      "the per-element path",
      bytes, bytes);
  std::vector<AlignmentRule> out;
  for (const char* t : {"q", "k", "v", "q_out", "k_cache", "v_cache"}) out.push_back({t, bytes, false, note});
  if (mode.norm) {
    for (const char* t : {"q_weight", "k_weight"}) out.push_back({t, bytes, false, note});
  }
  out.push_back({"cos_sin", 4, true, "f32 table"});
  out.push_back({"positions", 4, true, "int32 positions"});
  if (mode.paged) out.push_back({"block_table", 4, true, "int32 block ids"});
  return out;
}

ReferenceSpec RopeAppendSpec::reference(const Problem& problem) const {
  throw_if(problem_rejection(problem));
  const Mode mode = mode_of(problem);
  const int64_t t = problem.dim("tokens");
  const int64_t hq = problem.dim("heads_q");
  const int64_t hk = problem.dim("heads_kv");
  const int64_t d = problem.dim("head_dim");
  constexpr int64_t kThreads = 128;  // rope_append_reference.cu: a thread an item
  ReferenceSpec r;
  r.compile.source_name = "rope_append_reference.cu";
  const std::string expr =
      fmt::format("ktune_rope_append_reference<{},{},{},{}>", ktune::cuda_type_name(problem.dtype),
                  cpp_bool(mode.style == RopeStyle::kGptj), cpp_bool(mode.norm), cpp_bool(mode.paged));
  r.compile.name_expressions = {expr};
  r.compile.options = {"-std=c++17"};
  r.plan.tensors = input_tensors(problem, mode);
  r.plan.tensors.push_back({"q_ref", TensorRole::kOutput, DType::kF32, t * hq * d});
  r.plan.tensors.push_back({"k_cache_ref", TensorRole::kOutput, DType::kF32, t * hk * d});
  r.plan.tensors.push_back({"v_cache_ref", TensorRole::kOutput, DType::kF32, t * hk * d});
  KernelLaunch l;
  l.name_expression = expr;
  l.dims.grid = {u32(ceil_div(t * (hq + 2 * hk), kThreads)), 1, 1};
  l.dims.block = {u32(kThreads), 1, 1};
  l.args = tensor_args(mode, {"q_ref", "k_cache_ref", "v_cache_ref"});
  for (const int64_t v : {t, hq, hk, d, problem.dim("rot_dim")})
    l.args.push_back(ArgSpec::i32(static_cast<int32_t>(v)));
  append_geometry(l.args);
  r.plan.launches = {l};
  r.compare = {{"q_out", "q_ref"}, {"k_cache", "k_cache_ref"}, {"v_cache", "v_cache_ref"}};
  return r;
}

HostTensors RopeAppendSpec::cpu_reference(const Problem& problem, const HostTensors& inputs) const {
  throw_if(problem_rejection(problem));
  const Mode mode = mode_of(problem);
  const KvCacheGeometry geometry = tuned_geometry(problem);
  const std::vector<int32_t> positions = int32_values(input(inputs, "positions"));
  const std::vector<int32_t> table =
      mode.paged ? int32_values(input(inputs, "block_table")) : std::vector<int32_t>{};
  RopeAppendInputs in;
  in.q = input(inputs, "q");
  in.k = input(inputs, "k");
  in.v = input(inputs, "v");
  if (mode.norm) {
    in.q_weight = input(inputs, "q_weight");
    in.k_weight = input(inputs, "k_weight");
  }
  in.cos_sin = input(inputs, "cos_sin");
  in.positions = positions;
  in.block_table = table;
  in.tokens = problem.dim("tokens");
  in.heads_q = problem.dim("heads_q");
  in.heads_kv = problem.dim("heads_kv");
  in.head_dim = problem.dim("head_dim");
  in.rot_dim = problem.dim("rot_dim");
  in.style = mode.style;
  in.eps = kEps;
  const std::size_t cache = in.k.size();
  HostTensors out;
  std::vector<double> k_cache(cache, 0.0);
  std::vector<double> v_cache(cache, 0.0);
  out["q_out"] = rope_append_f64(in, geometry, k_cache, v_cache);
  out["k_cache"] = std::move(k_cache);
  out["v_cache"] = std::move(v_cache);
  return out;
}

Config RopeAppendSpec::default_config(const Problem&) const {
  return {"headwise", {{"THREADS", 4}, {"HEADS", 16}, {"VEC", 2}, {"ITEMS", 1}}};
}

}  // namespace ktune::kernel_templates
