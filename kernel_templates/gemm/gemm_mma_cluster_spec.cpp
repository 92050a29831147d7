#include "kernel_templates/gemm/gemm_mma_cluster_spec.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kernel_templates/ops_spec_util.hpp"

namespace ktune::kernel_templates {
namespace {

using ops_detail::ceil_div;
using ops_detail::u32;

constexpr int64_t kMaxGemmCluster = 8;   // the portable cluster size
constexpr int64_t kPartialPadding = 8;   // floats after each row of the partial tile
constexpr int64_t kClusterMinArch = 90;  // thread block clusters

using ops_detail::cpp_bool;

}  // namespace

std::vector<std::string> MmaClusterGemmSpec::param_names() const {
  return {"BLOCK_M", "BLOCK_N", "BLOCK_K", "WARPS_M", "WARPS_N", "STAGES", "SPLIT_K", "SWIZZLE"};
}

int64_t MmaClusterGemmSpec::cluster_shared_bytes(const Config& config) {
  const int64_t partial = config.at("BLOCK_M") * (config.at("BLOCK_N") + kPartialPadding) * 4;
  return std::max(MmaGemmSpec::shared_bytes(config), partial);
}

std::optional<std::string> MmaClusterGemmSpec::arch_rejection(std::string_view arch) const {
  return ops_detail::min_arch_rejection(arch, kClusterMinArch, "the mma_cluster template",
                                        "thread block clusters");
}

std::optional<std::string> MmaClusterGemmSpec::rejection(const Problem& problem, const Config& config) const {
  if (auto why = tile_rejection(problem, config)) return why;
  const int64_t split_k = config.at("SPLIT_K");
  if (auto why = ops_detail::range_rejection("SPLIT_K", split_k, 2, kMaxGemmCluster)) return why;
  const int64_t quads = config.at("BLOCK_M") * config.at("BLOCK_N") / 4;
  if (quads % split_k != 0) {
    return fmt::format("SPLIT_K={} does not divide the tile's {} four-element groups (BLOCK_M*BLOCK_N/4)",
                       split_k, quads);
  }
  if (auto why = ops_detail::shared_memory_rejection(cluster_shared_bytes(config))) return why;
  return ops_detail::tile_grid_rejection(problem, config.at("BLOCK_M"), config.at("BLOCK_N"));
}

std::string MmaClusterGemmSpec::canonical_name(const Problem& problem, const Config& config) const {
  const auto form = parse_gemm_form(problem.layout).value_or(GemmForm{});
  return fmt::format("gemm.{}.{}.mma_cluster.{}x{}x{}.w{}x{}.s{}.sk{}.g{}", ktune::to_string(problem.dtype),
                     form.text(), config.at("BLOCK_M"), config.at("BLOCK_N"), config.at("BLOCK_K"),
                     config.at("WARPS_M"), config.at("WARPS_N"), config.at("STAGES"), config.at("SPLIT_K"),
                     config.at("SWIZZLE"));
}

CompileSpec MmaClusterGemmSpec::compile_spec(const Problem& problem, const Config& config) const {
  require_accepted(problem, config);
  const GemmForm form = *parse_gemm_form(problem.layout);
  CompileSpec c;
  c.source_name = std::string(source_name());
  c.name_expressions.push_back(fmt::format(
      "ktune_gemm_mma_cluster<{},{},{},{},{},{},{},{},{},{},{},{}>", config.at("BLOCK_M"),
      config.at("BLOCK_N"), config.at("BLOCK_K"), config.at("WARPS_M"), config.at("WARPS_N"),
      config.at("STAGES"), config.at("SPLIT_K"), config.at("SWIZZLE"), ktune::cuda_type_name(problem.dtype),
      cpp_bool(form.layout == GemmLayout::kNT), cpp_bool(form.bias), cpp_bool(form.silu)));
  c.options = {"-std=c++17"};
  return c;
}

LaunchPlan MmaClusterGemmSpec::launch_plan(const Problem& problem, const Config& config) const {
  const CompileSpec c = compile_spec(problem, config);
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  const int64_t k = problem.dim("k");
  LaunchPlan p;
  p.tensors = tensors(problem, 1);
  KernelLaunch l;
  l.name_expression = c.name_expressions.front();
  l.dims.grid = {u32(ceil_div(m, config.at("BLOCK_M")) * ceil_div(n, config.at("BLOCK_N"))), 1,
                 u32(config.at("SPLIT_K"))};
  l.dims.block = {u32(config.at("WARPS_M") * config.at("WARPS_N") * 32), 1, 1};
  l.dims.dynamic_smem_bytes = u32(cluster_shared_bytes(config));
  l.args = {ArgSpec::of_tensor("a"),
            ArgSpec::of_tensor("b"),
            ArgSpec::of_tensor("c"),
            bias_arg(problem),
            ArgSpec::i32(static_cast<int32_t>(m)),
            ArgSpec::i32(static_cast<int32_t>(n)),
            ArgSpec::i32(static_cast<int32_t>(k))};
  for (ArgSpec& a : row_stride_args(problem)) l.args.push_back(std::move(a));
  p.launches.push_back(l);
  return p;
}

std::vector<AlignmentRule> MmaClusterGemmSpec::alignment(const Problem& problem, const Config& config) const {
  std::vector<AlignmentRule> rules = MmaGemmSpec::alignment(problem, config);
  for (AlignmentRule& r : rules) {
    if (r.tensor == "c") {
      r.bytes = 8;
      r.note = "8-byte stores of four C elements when C is 8-byte aligned and ldc % 4 == 0";
    }
  }
  return rules;
}

Config MmaClusterGemmSpec::default_config(const Problem&) const {
  return {"mma_cluster",
          {{"BLOCK_M", 16},
           {"BLOCK_N", 64},
           {"BLOCK_K", 128},
           {"WARPS_M", 1},
           {"WARPS_N", 4},
           {"STAGES", 4},
           {"SPLIT_K", 4},
           {"SWIZZLE", 1}}};
}

}  // namespace ktune::kernel_templates
