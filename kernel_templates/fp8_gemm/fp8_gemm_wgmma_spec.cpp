#include "kernel_templates/fp8_gemm/fp8_gemm_wgmma_spec.hpp"

#include <fmt/format.h>

#include "kernel_templates/fp8_gemm/fp8_gemm_spec.hpp"
#include "kernel_templates/ops_spec_util.hpp"

namespace ktune::kernel_templates {
namespace {

using ops_detail::ceil_div;
using ops_detail::one_of;
using ops_detail::u32;

constexpr int64_t kMinFp8WgmmaStages = 2;
constexpr int64_t kMaxFp8WgmmaStages = 8;

const Fp8GemmSpec& mma() {
  static const Fp8GemmSpec kMma;
  return kMma;
}

}  // namespace

int64_t Fp8GemmWgmmaSpec::shared_bytes(const Config& config) {
  return config.at("STAGES") * (config.at("BLOCK_M") + config.at("BLOCK_N")) * kBlockK + 1024 +
         config.at("STAGES") * 16;
}

int64_t Fp8GemmWgmmaSpec::threads(const Config& config) { return (config.at("BLOCK_M") / 64 + 1) * 128; }

std::optional<std::string> Fp8GemmWgmmaSpec::arch_rejection(std::string_view arch) const {
  if (arch == "sm_90" || arch == "sm_90a") return std::nullopt;
  return fmt::format(
      "the fp8_gemm wgmma variant needs sm_90a (Hopper wgmma.mma_async e4m3, TMA); {} lacks it", arch);
}

std::optional<std::string> Fp8GemmWgmmaSpec::rejection(const Problem& problem, const Config& config) const {
  if (auto why = mma().problem_rejection(problem)) return why;
  if (auto why = ops_detail::params_rejection(variant(), config, param_names())) return why;
  const int64_t bm = config.at("BLOCK_M");
  const int64_t bn = config.at("BLOCK_N");
  const int64_t stages = config.at("STAGES");
  if (!one_of(bm, {64, 128})) return fmt::format("BLOCK_M={} is not 64 or 128 (64-row warpgroups)", bm);
  if (!one_of(bn, {64, 128, 256})) return fmt::format("BLOCK_N={} is not 64, 128 or 256 (the wgmma N)", bn);
  if (config.at("BLOCK_K") != kBlockK) {
    return fmt::format("BLOCK_K={} is not {} (one 128-byte swizzle row of e4m3)", config.at("BLOCK_K"),
                       kBlockK);
  }
  if (stages < kMinFp8WgmmaStages || stages > kMaxFp8WgmmaStages) {
    return fmt::format("STAGES={} is outside [{}, {}]", stages, kMinFp8WgmmaStages, kMaxFp8WgmmaStages);
  }
  if (config.at("SWIZZLE") < 1) return std::string("SWIZZLE must be at least 1");
  if (auto why = ops_detail::shared_memory_rejection(shared_bytes(config))) return why;
  return ops_detail::tile_grid_rejection(problem, bm, bn);
}

std::string Fp8GemmWgmmaSpec::canonical_name(const Problem& problem, const Config& config) const {
  const std::string layout = problem.layout.empty() ? "nt" : problem.layout;
  return fmt::format("fp8_gemm.{}.{}.wgmma_tma.{}x{}x{}.s{}.g{}", ktune::to_string(problem.dtype), layout,
                     config.at("BLOCK_M"), config.at("BLOCK_N"), config.at("BLOCK_K"), config.at("STAGES"),
                     config.at("SWIZZLE"));
}

CompileSpec Fp8GemmWgmmaSpec::compile_spec(const Problem& problem, const Config& config) const {
  ops_detail::throw_if(rejection(problem, config));
  CompileSpec c;
  c.source_name = std::string(source_name());
  c.name_expressions.push_back(fmt::format("ktune_fp8_gemm_wgmma<{},{},{},{},{}>", config.at("BLOCK_M"),
                                           config.at("BLOCK_N"), config.at("STAGES"), config.at("SWIZZLE"),
                                           Fp8GemmSpec::rowcol(problem) ? "true" : "false"));
  // After the target's own --gpu-architecture: NVRTC compiles for the last one given.
  c.options = {"-std=c++17", "--gpu-architecture=sm_90a"};
  return c;
}

LaunchPlan Fp8GemmWgmmaSpec::launch_plan(const Problem& problem, const Config& config) const {
  const CompileSpec c = compile_spec(problem, config);
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  const int64_t k = problem.dim("k");
  const int64_t bm = config.at("BLOCK_M");
  const int64_t bn = config.at("BLOCK_N");
  LaunchPlan p;
  p.tensors = Fp8GemmSpec::tensors(problem);
  KernelLaunch l;
  l.name_expression = c.name_expressions.front();
  l.dims.grid = {u32(ceil_div(m, bm) * ceil_div(n, bn)), 1, 1};
  l.dims.block = {u32(threads(config)), 1, 1};
  l.dims.dynamic_smem_bytes = u32(shared_bytes(config));
  l.args = {ArgSpec::tensor_map("a", m, k, bm, kBlockK),
            ArgSpec::tensor_map("b", n, k, bn, kBlockK),
            ArgSpec::of_tensor("a_scale"),
            ArgSpec::of_tensor("b_scale"),
            ArgSpec::of_tensor("c"),
            ArgSpec::i32(static_cast<int32_t>(m)),
            ArgSpec::i32(static_cast<int32_t>(n)),
            ArgSpec::i32(static_cast<int32_t>(k))};
  p.launches.push_back(l);
  return p;
}

WorkCounts Fp8GemmWgmmaSpec::work(const Problem& problem) const { return mma().work(problem); }

std::vector<AlignmentRule> Fp8GemmWgmmaSpec::alignment(const Problem&, const Config&) const {
  return {
      {"a", 16, true, "TMA reads A through a tensor map: 16-byte aligned base"},
      {"b", 16, true, "TMA reads B through a tensor map: 16-byte aligned base"},
      {"a_scale", 4, true, "f32 scale loads"},
      {"b_scale", 4, true, "f32 scale loads"},
      {"c", 4, false, "paired 4-byte bf16 stores when C is 4-byte aligned and N is even"},
  };
}

ReferenceSpec Fp8GemmWgmmaSpec::reference(const Problem& problem) const { return mma().reference(problem); }

HostTensors Fp8GemmWgmmaSpec::cpu_reference(const Problem& problem, const HostTensors& inputs) const {
  return mma().cpu_reference(problem, inputs);
}

Config Fp8GemmWgmmaSpec::default_config(const Problem&) const {
  return {"wgmma_tma",
          {{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", kBlockK}, {"STAGES", 4}, {"SWIZZLE", 8}}};
}

std::vector<std::string> Fp8GemmWgmmaSpec::layouts() const { return mma().layouts(); }

}  // namespace ktune::kernel_templates
