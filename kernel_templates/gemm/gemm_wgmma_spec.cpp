#include "kernel_templates/gemm/gemm_wgmma_spec.hpp"

#include <fmt/format.h>

#include <limits>

#include "kernel_templates/gemm/gemm_mma_spec.hpp"
#include "kernel_templates/ops_spec_util.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

constexpr int64_t kBlockK = 64;         // one 128-byte swizzle row of 16-bit elements
constexpr int64_t kRowBytes = 128;      // bytes of one shared-memory tile row (BLOCK_K * 2)
constexpr int64_t kMinWgmmaStages = 3;  // a stage is refilled two k tiles after it was read
constexpr int64_t kMaxWgmmaStages = 8;  // beyond, more stages only take shared memory from occupancy
constexpr int64_t kWarpgroupRows = 64;
constexpr int64_t kWarpgroupThreads = 128;
constexpr int64_t kTmaBarrierBytes = 16;  // wgmma_tma: full[s] and empty[s]
constexpr int64_t kMaxSplitK = 16;        // beyond, the f32 slices cost more traffic than the SMs gain

using ops_detail::ceil_div;
using ops_detail::cpp_bool;
using ops_detail::one_of;
using ops_detail::u32;

/// The mma template's spec, whose alignment rules the cp.async pipeline shares.
const MmaGemmSpec& mma_spec() {
  static const MmaGemmSpec kMma;
  return kMma;
}

}  // namespace

std::vector<std::string> WgmmaGemmSpec::param_names() const {
  return {"BLOCK_M", "BLOCK_N", "BLOCK_K", "STAGES", "SPLIT_K", "SWIZZLE"};
}

int64_t WgmmaGemmSpec::shared_bytes(const Config& config) const {
  const int64_t barriers = pipeline_ == Pipeline::kTma ? config.at("STAGES") * kTmaBarrierBytes : 0;
  return config.at("STAGES") * (config.at("BLOCK_M") + config.at("BLOCK_N")) * kRowBytes + kAlignSlackBytes +
         barriers;
}

int64_t WgmmaGemmSpec::threads(const Config& config) const {
  return (config.at("BLOCK_M") / kWarpgroupRows + (pipeline_ == Pipeline::kTma ? 1 : 0)) * kWarpgroupThreads;
}

std::optional<std::string> WgmmaGemmSpec::arch_rejection(std::string_view arch) const {
  return rejection_for_arch(arch);
}

std::optional<std::string> WgmmaGemmSpec::rejection_for_arch(std::string_view arch) {
  if (arch == "sm_90" || arch == "sm_90a") return std::nullopt;
  return fmt::format("the wgmma template needs sm_90a (Hopper wgmma.mma_async); {} lacks it", arch);
}

std::optional<std::string> WgmmaGemmSpec::rejection(const Problem& problem, const Config& config) const {
  // The form's layout and epilogue (the TMA pipeline serves "nt" forms only: layouts()).
  if (auto why = problem_rejection(problem)) return why;
  if (problem.dtype != DType::kF16 && problem.dtype != DType::kBF16) {
    return fmt::format("the wgmma template takes f16 and bf16, not {}", ktune::to_string(problem.dtype));
  }
  if (auto why = params_rejection(config)) return why;
  const int64_t bm = config.at("BLOCK_M");
  const int64_t bn = config.at("BLOCK_N");
  const int64_t stages = config.at("STAGES");
  if (!one_of(bm, {64, 128, 256}))
    return fmt::format("BLOCK_M={} is not 64, 128 or 256 (64-row warpgroups)", bm);
  if (pipeline_ == Pipeline::kTma) {
    if (bm == 256)
      return std::string("BLOCK_M=256: the TMA template takes 64 or 128 (plus its producer warpgroup)");
    if (problem.dim("k") % 8 != 0) {
      return fmt::format("K={} is not a multiple of 8: TMA needs 16-byte rows", problem.dim("k"));
    }
  }
  if (!one_of(bn, {64, 128, 256})) return fmt::format("BLOCK_N={} is not 64, 128 or 256 (the wgmma N)", bn);
  if (config.at("BLOCK_K") != kBlockK) {
    return fmt::format("BLOCK_K={} is not 64 (one 128-byte swizzle row of 16-bit elements)",
                       config.at("BLOCK_K"));
  }
  if (stages < kMinWgmmaStages || stages > kMaxWgmmaStages) {
    return fmt::format("STAGES={} is outside [{}, {}]", stages, kMinWgmmaStages, kMaxWgmmaStages);
  }
  const int64_t split_k = config.at("SPLIT_K");
  const int64_t k_tiles = ceil_div(problem.dim("k"), kBlockK);
  if (split_k > kMaxSplitK) return fmt::format("SPLIT_K={} exceeds {}", split_k, kMaxSplitK);
  if (split_k > k_tiles) {
    return fmt::format("SPLIT_K={} exceeds the {} k tiles of 64 (K={}): a split would get none", split_k,
                       k_tiles, problem.dim("k"));
  }
  if (auto why = ops_detail::shared_memory_rejection(shared_bytes(config))) return why;
  return ops_detail::tile_grid_rejection(problem, bm, bn);
}

std::string WgmmaGemmSpec::canonical_name(const Problem& problem, const Config& config) const {
  const auto form = parse_gemm_form(problem.layout).value_or(GemmForm{});
  return fmt::format("gemm.{}.{}.{}.{}x{}x{}.s{}.sk{}.g{}", ktune::to_string(problem.dtype), form.text(),
                     variant(), config.at("BLOCK_M"), config.at("BLOCK_N"), config.at("BLOCK_K"),
                     config.at("STAGES"), config.at("SPLIT_K"), config.at("SWIZZLE"));
}

CompileSpec WgmmaGemmSpec::compile_spec(const Problem& problem, const Config& config) const {
  require_accepted(problem, config);
  const GemmForm form = *parse_gemm_form(problem.layout);
  CompileSpec c;
  c.source_name = std::string(source_name());
  if (pipeline_ == Pipeline::kTma) {
    c.name_expressions.push_back(fmt::format("ktune_gemm_wgmma_tma<{},{},{},{},{},{},{}>",
                                             config.at("BLOCK_M"), config.at("BLOCK_N"), config.at("STAGES"),
                                             config.at("SWIZZLE"), ktune::cuda_type_name(problem.dtype),
                                             cpp_bool(form.bias), cpp_bool(form.silu)));
  } else {
    c.name_expressions.push_back(
        fmt::format("ktune_gemm_wgmma<{},{},{},{},{},{},{},{}>", config.at("BLOCK_M"), config.at("BLOCK_N"),
                    config.at("STAGES"), config.at("SWIZZLE"), ktune::cuda_type_name(problem.dtype),
                    cpp_bool(form.layout == GemmLayout::kNT), cpp_bool(form.bias), cpp_bool(form.silu)));
  }
  if (config.at("SPLIT_K") > 1) {
    c.name_expressions.push_back(split_k_finish_name_expression(problem));
  }
  // After the target's own --gpu-architecture: NVRTC compiles for the last one given.
  c.options = {"-std=c++17", "--gpu-architecture=sm_90a"};
  return c;
}

LaunchPlan WgmmaGemmSpec::launch_plan(const Problem& problem, const Config& config) const {
  const CompileSpec c = compile_spec(problem, config);
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  const int64_t k = problem.dim("k");
  const int64_t split_k = config.at("SPLIT_K");
  LaunchPlan p;
  p.tensors = tensors(problem, split_k);
  KernelLaunch l;
  l.name_expression = c.name_expressions.front();
  l.dims.grid = {u32(ceil_div(m, config.at("BLOCK_M")) * ceil_div(n, config.at("BLOCK_N"))), 1, u32(split_k)};
  l.dims.block = {u32(threads(config)), 1, 1};
  l.dims.dynamic_smem_bytes = u32(shared_bytes(config));
  const int64_t bm = config.at("BLOCK_M");
  const int64_t bn = config.at("BLOCK_N");
  const bool tma = pipeline_ == Pipeline::kTma;
  l.args = {tma ? ArgSpec::tensor_map("a", m, k, bm, kBlockK) : ArgSpec::of_tensor("a"),
            tma ? ArgSpec::tensor_map("b", n, k, bn, kBlockK) : ArgSpec::of_tensor("b"),
            ArgSpec::of_tensor("c"),
            split_k > 1 ? ArgSpec::of_tensor("workspace") : ArgSpec::null_pointer(),
            bias_arg(problem),
            ArgSpec::i32(static_cast<int32_t>(m)),
            ArgSpec::i32(static_cast<int32_t>(n)),
            ArgSpec::i32(static_cast<int32_t>(k))};
  if (tma) {
    // A's and B's strides are in their tensor maps (ArgSpec::integer); C's is an argument.
    l.args.push_back(ArgSpec::row_stride("c", m, n));
  } else {
    for (ArgSpec& a : row_stride_args(problem)) l.args.push_back(std::move(a));
  }
  p.launches.push_back(l);
  if (split_k > 1) p.launches.push_back(split_k_finish_launch(problem, split_k));
  return p;
}

std::vector<AlignmentRule> WgmmaGemmSpec::alignment(const Problem& problem, const Config& config) const {
  if (pipeline_ == Pipeline::kTma) {
    return {{"a", 16, true, "TMA reads A through a tensor map: 16-byte aligned base and lda*sizeof(T)"},
            {"b", 16, true, "TMA reads B through a tensor map: 16-byte aligned base and ldb*sizeof(T)"},
            {"c", 4, false, "paired 4-byte stores of C when C is 4-byte aligned and ldc is even"}};
  }
  return mma_spec().alignment(problem, config);
}

Config WgmmaGemmSpec::default_config(const Problem&) const {
  return {
      std::string(variant()),
      {{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 64}, {"STAGES", 4}, {"SPLIT_K", 1}, {"SWIZZLE", 8}}};
}

std::vector<std::string> WgmmaGemmSpec::layouts() const {
  if (pipeline_ == Pipeline::kTma) return {"nt", "nt+bias", "nt+silu", "nt+bias+silu"};
  return {"nt", "nn", "nt+bias", "nn+bias", "nt+silu", "nn+silu", "nt+bias+silu", "nn+bias+silu"};
}

}  // namespace ktune::kernel_templates
