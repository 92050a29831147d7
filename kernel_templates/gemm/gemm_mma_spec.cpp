#include "kernel_templates/gemm/gemm_mma_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernel_templates/ops_spec_util.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

constexpr int64_t kMaxGridZ = 65535;  // gridDim.z limit
constexpr int64_t kMaxMmaWarps = 16;  // 512 threads: beyond, 128 registers a thread is the ceiling
constexpr int64_t kMaxMmaStages = 6;  // deeper pipelines only add shared memory on sm_80/sm_90
constexpr int64_t kMmaFinishThreads = 256;
// Enough 256-thread blocks to fill 132 SMs (H200) 8 times over; the kernels stride beyond that.
constexpr int64_t kMaxMmaFinishBlocks = 132 * 8 * 8;

using ops_detail::ceil_div;
using ops_detail::cpp_bool;
using ops_detail::is_pow2;
using ops_detail::u32;

KernelLaunch elementwise_launch(std::string expr, int64_t count) {
  KernelLaunch l;
  l.name_expression = std::move(expr);
  l.dims.grid = {u32(std::clamp<int64_t>(ceil_div(count, kMmaFinishThreads), 1, kMaxMmaFinishBlocks)), 1, 1};
  l.dims.block = {u32(kMmaFinishThreads), 1, 1};
  return l;
}

}  // namespace

std::vector<std::string> MmaGemmSpec::param_names() const {
  return {"BLOCK_M", "BLOCK_N", "BLOCK_K",      "WARPS_M", "WARPS_N",
          "STAGES",  "SPLIT_K", "SPLIT_K_MODE", "SWIZZLE"};
}

int64_t MmaGemmSpec::shared_bytes(const Config& config) {
  constexpr int64_t kElemBytes = 2;  // f16 / bf16
  return config.at("STAGES") * (config.at("BLOCK_M") + config.at("BLOCK_N")) * config.at("BLOCK_K") *
         kElemBytes;
}

std::optional<std::string> MmaGemmSpec::rejection(const Problem& problem, const Config& config) const {
  // SPLIT_K_MODE may be 0, which params_rejection's positivity rule refuses: check it apart.
  Config positive = config;
  if (const auto mode = config.find("SPLIT_K_MODE")) {
    if (*mode != 0 && *mode != 1)
      return fmt::format("SPLIT_K_MODE={} is neither 0 (deterministic) nor 1 (atomic)", *mode);
    positive.set("SPLIT_K_MODE", 1);
  }
  if (auto why = tile_rejection(problem, positive)) return why;
  if (config.at("SPLIT_K_MODE") == 1 && config.at("SPLIT_K") == 1)
    return "SPLIT_K_MODE=1 (atomic) needs SPLIT_K > 1";
  if (auto why = ops_detail::shared_memory_rejection(shared_bytes(config))) return why;
  return ops_detail::tile_grid_rejection(problem, config.at("BLOCK_M"), config.at("BLOCK_N"));
}

std::optional<std::string> MmaGemmSpec::tile_rejection(const Problem& problem, const Config& config) const {
  const auto form = parse_gemm_form(problem.layout);
  if (!form) {
    return fmt::format("gemm layout '{}' is not nt or nn with an optional +bias then +silu", problem.layout);
  }
  if (auto why = problem_rejection(problem)) return why;
  if (problem.dtype != DType::kF16 && problem.dtype != DType::kBF16) {
    return fmt::format("the {} template takes f16 and bf16, not {}", variant(),
                       ktune::to_string(problem.dtype));
  }
  if (auto why = params_rejection(config)) return why;
  const int64_t bm = config.at("BLOCK_M");
  const int64_t bn = config.at("BLOCK_N");
  const int64_t bk = config.at("BLOCK_K");
  const int64_t wm = config.at("WARPS_M");
  const int64_t wn = config.at("WARPS_N");
  const int64_t stages = config.at("STAGES");
  if (bm % (16 * wm) != 0) return fmt::format("BLOCK_M={} is not a multiple of 16*WARPS_M={}", bm, 16 * wm);
  if (bn % (16 * wn) != 0) return fmt::format("BLOCK_N={} is not a multiple of 16*WARPS_N={}", bn, 16 * wn);
  if (!is_pow2(bn) || bn < 16) return fmt::format("BLOCK_N={} is not a power of two >= 16", bn);
  if (!is_pow2(bk) || bk < 16 || bk > 128)
    return fmt::format("BLOCK_K={} is not a power of two in [16, 128]", bk);
  if (wm * wn > kMaxMmaWarps)
    return fmt::format("WARPS_M*WARPS_N={} exceeds {} warps", wm * wn, kMaxMmaWarps);
  if (stages < 2 || stages > kMaxMmaStages)
    return fmt::format("STAGES={} is outside [2, {}]", stages, kMaxMmaStages);
  if (config.at("SPLIT_K") > kMaxGridZ)
    return fmt::format("SPLIT_K={} exceeds {}", config.at("SPLIT_K"), kMaxGridZ);
  return std::nullopt;
}

std::string MmaGemmSpec::canonical_name(const Problem& problem, const Config& config) const {
  const auto form = parse_gemm_form(problem.layout).value_or(GemmForm{});
  return fmt::format("gemm.{}.{}.mma.{}x{}x{}.w{}x{}.s{}.sk{}.a{}.g{}", ktune::to_string(problem.dtype),
                     form.text(), config.at("BLOCK_M"), config.at("BLOCK_N"), config.at("BLOCK_K"),
                     config.at("WARPS_M"), config.at("WARPS_N"), config.at("STAGES"), config.at("SPLIT_K"),
                     config.at("SPLIT_K_MODE"), config.at("SWIZZLE"));
}

CompileSpec MmaGemmSpec::compile_spec(const Problem& problem, const Config& config) const {
  require_accepted(problem, config);
  const GemmForm form = *parse_gemm_form(problem.layout);
  const std::string_view type = ktune::cuda_type_name(problem.dtype);
  const int64_t split_k = config.at("SPLIT_K");
  const bool atomic = config.at("SPLIT_K_MODE") == 1;
  CompileSpec c;
  c.source_name = std::string(source_name());
  c.name_expressions.push_back(
      fmt::format("ktune_gemm_mma<{},{},{},{},{},{},{},{},{},{},{},{},{}>", config.at("BLOCK_M"),
                  config.at("BLOCK_N"), config.at("BLOCK_K"), config.at("WARPS_M"), config.at("WARPS_N"),
                  config.at("STAGES"), split_k, cpp_bool(atomic), config.at("SWIZZLE"), type,
                  cpp_bool(form.layout == GemmLayout::kNT), cpp_bool(form.bias), cpp_bool(form.silu)));
  if (split_k > 1) {
    if (atomic) c.name_expressions.push_back("ktune_gemm_zero<float>");
    c.name_expressions.push_back(split_k_finish_name_expression(problem));
  }
  c.options = {"-std=c++17"};
  return c;
}

LaunchPlan MmaGemmSpec::launch_plan(const Problem& problem, const Config& config) const {
  const CompileSpec c = compile_spec(problem, config);
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  const int64_t k = problem.dim("k");
  const int64_t split_k = config.at("SPLIT_K");
  const bool atomic = config.at("SPLIT_K_MODE") == 1;
  LaunchPlan p;
  p.tensors = tensors(problem, split_k);
  if (atomic) {  // one f32 sum per element, not one per split
    for (TensorSpec& t : p.tensors) {
      if (t.name == "workspace") t.elements = m * n;
    }
  }

  if (atomic) {
    KernelLaunch zero = elementwise_launch(c.name_expressions.at(1), m * n);
    zero.args = {ArgSpec::of_tensor("workspace"), ArgSpec::i64(m * n)};
    p.launches.push_back(zero);
  }
  KernelLaunch l;
  l.name_expression = c.name_expressions.front();
  l.dims.grid = {u32(ceil_div(m, config.at("BLOCK_M")) * ceil_div(n, config.at("BLOCK_N"))), 1, u32(split_k)};
  l.dims.block = {u32(config.at("WARPS_M") * config.at("WARPS_N") * 32), 1, 1};
  l.dims.dynamic_smem_bytes = u32(shared_bytes(config));
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
  if (split_k > 1) p.launches.push_back(split_k_finish_launch(problem, atomic ? 1 : split_k));
  return p;
}

std::vector<AlignmentRule> MmaGemmSpec::alignment(const Problem& problem, const Config&) const {
  const bool nt = parse_gemm_form(problem.layout).value_or(GemmForm{}).layout == GemmLayout::kNT;
  return {
      {"a", 16, false, "16-byte cp.async of A rows when A is 16-byte aligned and K, lda % 8 == 0"},
      {"b", 16, false,
       nt ? "16-byte cp.async of B rows when B is 16-byte aligned and K, ldb % 8 == 0"
          : "16-byte cp.async of B rows when B is 16-byte aligned and N, ldb % 8 == 0"},
      {"c", 4, false, "paired 4-byte stores of C when C is 4-byte aligned and ldc is even"},
  };
}

Config MmaGemmSpec::default_config(const Problem&) const {
  return {"mma",
          {{"BLOCK_M", 64},
           {"BLOCK_N", 128},
           {"BLOCK_K", 32},
           {"WARPS_M", 2},
           {"WARPS_N", 2},
           {"STAGES", 3},
           {"SPLIT_K", 1},
           {"SPLIT_K_MODE", 0},
           {"SWIZZLE", 8}}};
}

}  // namespace ktune::kernel_templates
