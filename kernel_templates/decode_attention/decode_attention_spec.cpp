#include "kernel_templates/decode_attention/decode_attention_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kernel_templates/ops_spec_util.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using namespace ops_detail;

constexpr int64_t kCombineRowsPerBlock = 4;  // decode_attention.cu: a warp a row, 128 threads
constexpr int64_t kReferenceThreads = 128;   // decode_attention_reference.cu
constexpr int64_t kH200Sms = 132;            // default_config's target: two blocks an SM
constexpr int64_t kMinKeysPerSplit = 256;    // below it the combine costs more than the split gains

int64_t seq_max_of(const Problem& p, const DecodeAttentionCall& call) {
  return call.seq_max > 0 ? call.seq_max : p.dim("seq");
}

std::string combine_expression(const Problem& p) {
  return fmt::format("ktune_decode_attention_combine<{},{}>", p.dim("head_dim"),
                     ktune::cuda_type_name(p.dtype));
}

/// A step coprime with n, so i * step mod n is a permutation of [0, n).
int64_t coprime_step(int64_t n) {
  for (const int64_t step : {7919, 7907, 7901, 7883, 7879}) {
    if (std::gcd(step, n) == 1) return step;
  }
  return 1;
}

std::vector<TensorSpec> attention_input_tensors(const Problem& p, const DecodeAttentionCall& call) {
  const int64_t rows = p.dim("batch") * p.dim("heads_q");
  const bool paged = DecodeAttentionSpec::paged(p);
  const DecodeAttentionCall g = DecodeAttentionSpec::paged_geometry(p, call);
  const int64_t kv = paged ? g.num_blocks * p.dim("heads_kv") * g.block_size * p.dim("head_dim")
                           : p.dim("batch") * p.dim("heads_kv") * seq_max_of(p, call) * p.dim("head_dim");
  std::vector<TensorSpec> out = {{"q", TensorRole::kInput, p.dtype, rows * p.dim("head_dim")},
                                 {"k", TensorRole::kInput, p.dtype, kv},
                                 {"v", TensorRole::kInput, p.dtype, kv}};
  // int32 values, declared f32 like softmax's lengths (ktune::DType has no integer type).
  if (call.context_lens) out.push_back({"context_lens", TensorRole::kInput, DType::kF32, p.dim("batch")});
  if (paged) {  // a permutation of the blocks: every sequence's keys in blocks of its own
    TensorSpec table{"block_table", TensorRole::kInput, DType::kF32, p.dim("batch") * g.max_blocks};
    table.integer = IntType::kI32;
    table.fill = BufferFill::sequence(g.num_blocks / 3, coprime_step(g.num_blocks), g.num_blocks);
    out.push_back(table);
  }
  return out;
}

/// The arguments after the tensors (q, k, v, outputs): context_lens, heads_q, heads_kv, seq, seq_max,
/// [num_splits when `splits` > 0: the candidate, not the reference], scale.
std::vector<ArgSpec> tail_args(const Problem& p, const DecodeAttentionCall& call, int64_t splits) {
  std::vector<ArgSpec> out;
  out.push_back(call.context_lens ? ArgSpec::of_tensor("context_lens") : ArgSpec::null_pointer());
  out.push_back(ArgSpec::i32(static_cast<int32_t>(p.dim("heads_q"))));
  out.push_back(ArgSpec::i32(static_cast<int32_t>(p.dim("heads_kv"))));
  out.push_back(ArgSpec::i32(static_cast<int32_t>(p.dim("seq"))));
  out.push_back(ArgSpec::i32(static_cast<int32_t>(seq_max_of(p, call))));
  if (splits > 0) out.push_back(ArgSpec::i32(static_cast<int32_t>(splits)));
  out.push_back(ArgSpec::f32(DecodeAttentionSpec::scale(p, call)));
  // The paged geometry (every kernel takes it; contiguous plans pass a null table and zeros).
  const bool paged = DecodeAttentionSpec::paged(p);
  const DecodeAttentionCall g = DecodeAttentionSpec::paged_geometry(p, call);
  out.push_back(paged ? ArgSpec::of_tensor("block_table") : ArgSpec::null_pointer());
  for (const int64_t v : {g.block_size, g.max_blocks, g.num_blocks}) {
    out.push_back(ArgSpec::i32(static_cast<int32_t>(paged ? v : 0)));
  }
  return out;
}

}  // namespace

int64_t DecodeAttentionSpec::heads_per_block(const Problem& problem) {
  const int64_t group = problem.dim("heads_q") / problem.dim("heads_kv");
  for (int64_t g = std::min(group, kMaxHeadsPerBlock); g > 1; --g) {
    if (group % g == 0) return g;
  }
  return 1;
}

int64_t DecodeAttentionSpec::unroll(const Problem& problem, const Config& config) {
  // A key is head_dim / 8 lanes (16 bytes of bf16 each): 256 / head_dim keys a warp a load.
  const int64_t keys_per_load = config.at("WARPS") * (256 / problem.dim("head_dim"));
  return config.at("BLOCK_N") % keys_per_load == 0 ? config.at("BLOCK_N") / keys_per_load : 0;
}

int64_t DecodeAttentionSpec::workspace_elements(const Problem& problem, int64_t split_k) {
  if (split_k <= 1) return 0;
  return problem.dim("batch") * problem.dim("heads_q") * split_k * (problem.dim("head_dim") + 2);
}

DecodeAttentionCall DecodeAttentionSpec::paged_geometry(const Problem& problem, DecodeAttentionCall call) {
  if (call.block_size == 0) call.block_size = kTunedBlockSize;
  if (call.max_blocks == 0) call.max_blocks = ceil_div(problem.dim("seq"), call.block_size);
  if (call.num_blocks == 0) call.num_blocks = problem.dim("batch") * call.max_blocks;
  return call;
}

float DecodeAttentionSpec::scale(const Problem& problem, const DecodeAttentionCall& call) {
  if (call.scale != 0.0f) return call.scale;
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(problem.dim("head_dim"))));
}

std::optional<std::string> DecodeAttentionSpec::problem_rejection(const Problem& problem) const {
  if (auto why = dims_rejection(kernel(), problem, dims())) return why;
  if (problem.dtype != DType::kBF16) {
    return fmt::format("decode_attention supports bf16 only, not {}", ktune::to_string(problem.dtype));
  }
  if (!problem.layout.empty() && !paged(problem)) {
    return fmt::format("decode_attention has no mode '{}' (only '' and 'paged')", problem.layout);
  }
  const int64_t d = problem.dim("head_dim");
  if (d != 64 && d != 128) return fmt::format("decode_attention supports head_dim 64 and 128, not {}", d);
  const int64_t hq = problem.dim("heads_q");
  const int64_t hkv = problem.dim("heads_kv");
  if (hq % hkv != 0) {
    return fmt::format("heads_q={} is not a multiple of heads_kv={} (grouped-query attention)", hq, hkv);
  }
  if (problem.dim("batch") > kMaxGridYZ) {
    return fmt::format("decode_attention batch={} exceeds {} (grid z)", problem.dim("batch"), kMaxGridYZ);
  }
  if (hq / heads_per_block(problem) > kMaxGridYZ) {
    return fmt::format("decode_attention heads_q={} needs more than {} blocks (grid y)", hq, kMaxGridYZ);
  }
  return std::nullopt;
}

std::optional<std::string> DecodeAttentionSpec::call_rejection(const Problem& problem,
                                                               const DecodeAttentionCall& call) const {
  if (auto why = problem_rejection(problem)) return why;
  if (call.seq_max < 0 || call.seq_max > kMaxDim) {
    return fmt::format("KV cache capacity seq_max={} is outside [1, {}]", call.seq_max, kMaxDim);
  }
  if (problem.dim("seq") > seq_max_of(problem, call)) {
    return fmt::format("context seq={} exceeds the KV cache capacity seq_max={}", problem.dim("seq"),
                       call.seq_max);
  }
  if (!std::isfinite(call.scale)) return fmt::format("softmax scale {} is not finite", call.scale);
  if (paged(problem)) {
    const DecodeAttentionCall g = paged_geometry(problem, call);
    if (g.block_size < 16 || g.block_size % 16 != 0 || g.block_size > kMaxDim) {
      return fmt::format("paged KV cache: block_size={} is not a positive multiple of 16", g.block_size);
    }
    if (g.max_blocks < 1 || g.max_blocks > kMaxDim || g.max_blocks * g.block_size < problem.dim("seq")) {
      return fmt::format("paged KV cache: max_blocks={} blocks of {} keys do not hold seq={}", g.max_blocks,
                         g.block_size, problem.dim("seq"));
    }
    if (g.num_blocks < 1 || g.num_blocks > kMaxDim) {
      return fmt::format("paged KV cache: num_blocks={} is outside [1, {}]", g.num_blocks, kMaxDim);
    }
  }
  return std::nullopt;
}

std::optional<std::string> DecodeAttentionSpec::rejection(const Problem& problem,
                                                          const Config& config) const {
  if (auto why = problem_rejection(problem)) return why;
  if (paged(problem)) {
    return std::string(
        "the splitkv template reads a contiguous cache (the paged mode is the tensor-core templates')");
  }
  if (auto why = params_rejection(variant(), config, param_names())) return why;
  const int64_t warps = config.at("WARPS");
  if (warps != 1 && warps != 2 && warps != 4 && warps != 8)
    return fmt::format("WARPS={} is not 1, 2, 4 or 8", warps);
  const int64_t split_k = config.at("SPLIT_K");
  if (split_k < 1 || split_k > kMaxSplitK)
    return fmt::format("SPLIT_K={} is outside [1, {}]", split_k, kMaxSplitK);
  const int64_t keys_per_load = warps * (256 / problem.dim("head_dim"));
  const int64_t u = unroll(problem, config);
  if (u < 1 || u > kMaxUnroll) {
    return fmt::format("BLOCK_N={} is not WARPS * {} keys times 1 to {} loads a lane (head_dim {})",
                       config.at("BLOCK_N"), keys_per_load / warps, kMaxUnroll, problem.dim("head_dim"));
  }
  const int64_t g = heads_per_block(problem);
  if (u * g > kMaxScores) {
    return fmt::format(
        "BLOCK_N={} keeps {} scores a lane for {} heads a block (at most {}): fewer keys a tile",
        config.at("BLOCK_N"), u * g, g, kMaxScores);
  }
  return std::nullopt;
}

std::string DecodeAttentionSpec::canonical_name(const Problem& problem, const Config& config) const {
  return fmt::format("decode_attention.{}{}{}.n{}.w{}.sk{}", ktune::to_string(problem.dtype),
                     problem.layout.empty() ? "" : ".", problem.layout, config.at("BLOCK_N"),
                     config.at("WARPS"), config.at("SPLIT_K"));
}

CompileSpec DecodeAttentionSpec::compile_spec(const Problem& problem, const Config& config) const {
  throw_if(rejection(problem, config));
  CompileSpec spec;
  spec.source_name = std::string(source_name());
  spec.name_expressions = {main_kernel(problem, config)};
  if (!merges_splits_in_kernel()) spec.name_expressions.push_back(combine_expression(problem));
  spec.options = {"-std=c++17"};
  return spec;
}

LaunchPlan DecodeAttentionSpec::launch_plan(const Problem& problem, const Config& config) const {
  return launch_plan(problem, config, DecodeAttentionCall{});
}

LaunchPlan DecodeAttentionSpec::launch_plan(const Problem& problem, const Config& config,
                                            const DecodeAttentionCall& call) const {
  throw_if(rejection(problem, config));
  throw_if(call_rejection(problem, call));
  const int64_t split_k = config.at("SPLIT_K");
  const int64_t rows = problem.dim("batch") * problem.dim("heads_q");
  const bool combine_launch = split_k > 1 && !merges_splits_in_kernel();
  LaunchPlan p;
  p.tensors = attention_input_tensors(problem, call);
  p.tensors.push_back({"o", TensorRole::kOutput, problem.dtype, rows * problem.dim("head_dim")});
  if (combine_launch) {
    p.tensors.push_back(
        {"workspace", TensorRole::kWorkspace, DType::kF32, workspace_elements(problem, split_k)});
  }
  KernelLaunch main;
  main.name_expression = main_kernel(problem, config);
  main.dims = main_dims(problem, config);
  main.dims.grid = {u32(split_k), u32(problem.dim("heads_q") / heads_per_block(problem)),
                    u32(problem.dim("batch"))};
  main.args = {ArgSpec::of_tensor("q"), ArgSpec::of_tensor("k"), ArgSpec::of_tensor("v"),
               combine_launch ? ArgSpec::null_pointer() : ArgSpec::of_tensor("o"),
               combine_launch ? ArgSpec::of_tensor("workspace") : ArgSpec::null_pointer()};
  for (auto& a : tail_args(problem, call, split_k)) main.args.push_back(std::move(a));
  p.launches.push_back(main);
  if (combine_launch) {
    KernelLaunch combine;
    combine.name_expression = combine_expression(problem);
    combine.dims.grid = {u32(ceil_div(rows, kCombineRowsPerBlock)), 1, 1};
    combine.dims.block = {u32(32 * kCombineRowsPerBlock), 1, 1};
    combine.args = {ArgSpec::of_tensor("workspace"), ArgSpec::of_tensor("o"),
                    ArgSpec::i32(static_cast<int32_t>(rows)), ArgSpec::i32(static_cast<int32_t>(split_k))};
    p.launches.push_back(combine);
  }
  return p;
}

std::string DecodeAttentionSpec::main_kernel(const Problem& problem, const Config& config) const {
  return fmt::format("ktune_decode_attention<{},{},{},{},{}>", problem.dim("head_dim"),
                     heads_per_block(problem), config.at("BLOCK_N"), config.at("WARPS"),
                     ktune::cuda_type_name(problem.dtype));
}

LaunchDims DecodeAttentionSpec::main_dims(const Problem&, const Config& config) const {
  LaunchDims dims;
  dims.block = {u32(32 * config.at("WARPS")), 1, 1};
  return dims;
}

WorkCounts DecodeAttentionSpec::work(const Problem& problem) const {
  const auto b = static_cast<double>(problem.dim("batch"));
  const auto hq = static_cast<double>(problem.dim("heads_q"));
  const auto hkv = static_cast<double>(problem.dim("heads_kv"));
  const auto s = static_cast<double>(problem.dim("seq"));
  const auto d = static_cast<double>(problem.dim("head_dim"));
  const double es = static_cast<double>(ktune::size_of(problem.dtype));
  // q.k and p.v: two multiply-adds per (head, key, element).
  return {4.0 * b * hq * s * d, (2.0 * b * hkv * s * d + 2.0 * b * hq * d) * es};
}

std::vector<AlignmentRule> DecodeAttentionSpec::alignment(const Problem&, const Config&) const {
  const std::string note = "K and V rows are read as 16-byte vectors; there is no per-element path";
  return {{"k", 16, true, note}, {"v", 16, true, note}};
}

ReferenceSpec DecodeAttentionSpec::reference(const Problem& problem) const {
  return reference(problem, DecodeAttentionCall{});
}

ReferenceSpec DecodeAttentionSpec::reference(const Problem& problem, const DecodeAttentionCall& call) const {
  throw_if(call_rejection(problem, call));
  const int64_t rows = problem.dim("batch") * problem.dim("heads_q");
  ReferenceSpec r;
  r.compile.source_name = "decode_attention_reference.cu";
  const std::string expr = fmt::format("ktune_decode_attention_reference<{},{}>", problem.dim("head_dim"),
                                       ktune::cuda_type_name(problem.dtype));
  r.compile.name_expressions = {expr};
  r.compile.options = {"-std=c++17"};
  r.plan.tensors = attention_input_tensors(problem, call);
  r.plan.tensors.push_back({"o_ref", TensorRole::kOutput, DType::kF32, rows * problem.dim("head_dim")});
  r.plan.tensors.push_back({"scores_ref", TensorRole::kWorkspace, DType::kF32, rows * problem.dim("seq")});
  KernelLaunch l;
  l.name_expression = expr;
  l.dims.grid = {u32(problem.dim("heads_q")), u32(problem.dim("batch")), 1};
  l.dims.block = {u32(kReferenceThreads), 1, 1};
  l.args = {ArgSpec::of_tensor("q"), ArgSpec::of_tensor("k"), ArgSpec::of_tensor("v"),
            ArgSpec::of_tensor("o_ref"), ArgSpec::of_tensor("scores_ref")};
  for (auto& a : tail_args(problem, call, 0)) l.args.push_back(std::move(a));
  r.plan.launches = {l};
  r.compare = {{"o", "o_ref"}};
  return r;
}

HostTensors DecodeAttentionSpec::cpu_reference(const Problem& problem, const HostTensors& inputs) const {
  return cpu_reference(problem, inputs, DecodeAttentionCall{});
}

HostTensors DecodeAttentionSpec::cpu_reference(const Problem& problem, const HostTensors& inputs,
                                               const DecodeAttentionCall& call) const {
  throw_if(call_rejection(problem, call));
  auto input = [&](const char* name) -> const std::vector<double>& {
    const auto it = inputs.find(name);
    if (it == inputs.end()) {
      throw Error(ErrorKind::kBadInput, fmt::format("decode_attention cpu reference needs input '{}'", name));
    }
    return it->second;
  };
  std::vector<int32_t> lens;
  if (call.context_lens) {
    for (double v : input("context_lens")) lens.push_back(static_cast<int32_t>(static_cast<int64_t>(v)));
  }
  DecodeAttentionShape shape{problem.dim("batch"), problem.dim("heads_q"),    problem.dim("heads_kv"),
                             problem.dim("seq"),   seq_max_of(problem, call), problem.dim("head_dim")};
  std::vector<int32_t> table;
  if (paged(problem)) {
    const DecodeAttentionCall g = paged_geometry(problem, call);
    shape.block_size = g.block_size;
    shape.max_blocks = g.max_blocks;
    shape.num_blocks = g.num_blocks;
    for (double v : input("block_table")) table.push_back(static_cast<int32_t>(static_cast<int64_t>(v)));
  }
  HostTensors out;
  out["o"] =
      decode_attention_f64(input("q"), input("k"), input("v"), lens, shape, scale(problem, call), table);
  return out;
}

Config DecodeAttentionSpec::default_config(const Problem& problem) const {
  constexpr int64_t kWarps = 4;
  constexpr int64_t kUnroll = 4;  // <= kMaxScores / kMaxHeadsPerBlock: serves every G
  const int64_t d = problem.dim("head_dim") == 64 ? 64 : 128;
  const int64_t block_n = kWarps * (256 / d) * kUnroll;
  const int64_t blocks =
      problem.dim("batch") * (problem.dim("heads_q") / std::max<int64_t>(1, heads_per_block(problem)));
  const int64_t want = ceil_div(2 * kH200Sms, std::max<int64_t>(1, blocks));
  const int64_t most = std::max<int64_t>(1, problem.dim("seq") / kMinKeysPerSplit);
  const int64_t split_k = std::clamp<int64_t>(want, 1, std::min(most, kMaxSplitK));
  return {"splitkv", {{"BLOCK_N", block_n}, {"WARPS", kWarps}, {"SPLIT_K", split_k}}};
}

}  // namespace ktune::kernel_templates
