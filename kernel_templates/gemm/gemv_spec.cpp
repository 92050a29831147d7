#include "kernel_templates/gemm/gemv_spec.hpp"

#include <fmt/format.h>

#include "kernel_templates/ops_spec_util.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

constexpr int64_t kMaxGemvSplits = 65535;  // CUDA limit of gridDim.y (the splits)
constexpr int64_t kMaxGemvWarps = 32;      // 1024 threads a block
// partial[WARPS][ROWS * MT] floats must fit the 48 KiB of static shared memory.
constexpr int64_t kStaticSmemLimit = 48 * 1024;

using ops_detail::ceil_div;
using ops_detail::cpp_bool;
using ops_detail::u32;

}  // namespace

std::vector<std::string> GemvSpec::param_names() const {
  return {"BLOCK_K", "SPLIT_K", "WARPS", "ROWS_PER_BLOCK"};
}

int64_t GemvSpec::m_tile(int64_t m) {
  int64_t t = 1;
  while (t < m) t *= 2;
  return t;
}

std::optional<std::string> GemvSpec::rejection(const Problem& problem, const Config& config) const {
  if (auto why = problem_rejection(problem)) return why;
  if (auto why = params_rejection(config)) return why;
  if (problem.dim("m") > kMaxM) return fmt::format("gemv serves m <= {}, not m={}", kMaxM, problem.dim("m"));
  const int64_t bk = config.at("BLOCK_K");
  const int64_t warps = config.at("WARPS");
  const int64_t rows = config.at("ROWS_PER_BLOCK");
  const int64_t lane_chunk = 32 * (16 / static_cast<int64_t>(ktune::size_of(problem.dtype)));
  if (bk % lane_chunk != 0) {
    return fmt::format("BLOCK_K={} is not a multiple of {} (32 lanes x 16 bytes of {})", bk, lane_chunk,
                       ktune::to_string(problem.dtype));
  }
  if (warps > kMaxGemvWarps) return fmt::format("WARPS={} exceeds {}", warps, kMaxGemvWarps);
  if (config.at("SPLIT_K") > kMaxGemvSplits)
    return fmt::format("SPLIT_K={} exceeds {}", config.at("SPLIT_K"), kMaxGemvSplits);
  if (warps * rows * m_tile(problem.dim("m")) * 4 > kStaticSmemLimit) {
    return fmt::format("WARPS*ROWS_PER_BLOCK*{} partial sums exceed 48 KiB of shared memory",
                       m_tile(problem.dim("m")));
  }
  return std::nullopt;
}

std::string GemvSpec::canonical_name(const Problem& problem, const Config& config) const {
  return fmt::format("gemm.{}.{}.gemv.k{}.sk{}.w{}.r{}", ktune::to_string(problem.dtype),
                     parse_gemm_form(problem.layout).value_or(GemmForm{}).text(), config.at("BLOCK_K"),
                     config.at("SPLIT_K"), config.at("WARPS"), config.at("ROWS_PER_BLOCK"));
}

CompileSpec GemvSpec::compile_spec(const Problem& problem, const Config& config) const {
  require_accepted(problem, config);
  CompileSpec c;
  c.source_name = std::string(source_name());
  const GemmForm form = *parse_gemm_form(problem.layout);
  c.name_expressions.push_back(
      fmt::format("ktune_gemv<{},{},{},{},{},{},{},{}>", config.at("BLOCK_K"), config.at("SPLIT_K"),
                  config.at("WARPS"), config.at("ROWS_PER_BLOCK"), m_tile(problem.dim("m")),
                  ktune::cuda_type_name(problem.dtype), cpp_bool(form.bias), cpp_bool(form.silu)));
  if (config.at("SPLIT_K") > 1) c.name_expressions.push_back(split_k_finish_name_expression(problem));
  c.options = {"-std=c++17"};
  return c;
}

LaunchPlan GemvSpec::launch_plan(const Problem& problem, const Config& config) const {
  const CompileSpec c = compile_spec(problem, config);
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  const int64_t k = problem.dim("k");
  const int64_t split_k = config.at("SPLIT_K");
  LaunchPlan p;
  p.tensors = tensors(problem, split_k);
  KernelLaunch l;
  l.name_expression = c.name_expressions.front();
  l.dims.grid = {u32(ceil_div(n, config.at("ROWS_PER_BLOCK"))), u32(split_k), 1};
  l.dims.block = {u32(config.at("WARPS") * 32), 1, 1};
  l.args = {ArgSpec::of_tensor("a"),
            ArgSpec::of_tensor("b"),
            ArgSpec::of_tensor("c"),
            split_k > 1 ? ArgSpec::of_tensor("workspace") : ArgSpec::null_pointer(),
            bias_arg(problem),
            ArgSpec::i32(static_cast<int32_t>(m)),
            ArgSpec::i32(static_cast<int32_t>(n)),
            ArgSpec::i32(static_cast<int32_t>(k))};
  for (ArgSpec& a : row_stride_args(problem)) l.args.push_back(std::move(a));
  p.launches.push_back(l);
  if (split_k > 1) p.launches.push_back(split_k_finish_launch(problem, split_k));
  return p;
}

std::vector<AlignmentRule> GemvSpec::alignment(const Problem&, const Config&) const {
  return {
      {"a", 16, false,
       "16-byte vector loads when A and B are 16-byte aligned and K, lda, ldb times sizeof(T) % 16 == 0"},
      {"b", 16, false,
       "16-byte vector loads when A and B are 16-byte aligned and K, lda, ldb times sizeof(T) % 16 == 0"},
  };
}

Config GemvSpec::default_config(const Problem& problem) const {
  const int64_t lane_chunk = 32 * (16 / static_cast<int64_t>(ktune::size_of(problem.dtype)));
  return {"gemv", {{"BLOCK_K", lane_chunk}, {"SPLIT_K", 1}, {"WARPS", 4}, {"ROWS_PER_BLOCK", 2}}};
}

}  // namespace ktune::kernel_templates
