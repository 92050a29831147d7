#include "kernel_templates/decode_attention/decode_attention_mma_spec.hpp"

#include <fmt/format.h>

#include "kernel_templates/ops_spec_util.hpp"

namespace ktune::kernel_templates {

using namespace ops_detail;

std::optional<std::string> DecodeAttentionMmaSpec::arch_rejection(std::string_view arch) const {
  return min_arch_rejection(arch, 80, "the decode_attention mma template", "mma.sync, ldmatrix, cp.async");
}

int64_t DecodeAttentionMmaSpec::shared_bytes(const Problem& problem, const Config& config) {
  return config.at("WARPS") * config.at("STAGES") * 2 * config.at("KEYS") * problem.dim("head_dim") *
         static_cast<int64_t>(ktune::size_of(problem.dtype));
}

std::optional<std::string> DecodeAttentionMmaSpec::rejection(const Problem& problem,
                                                             const Config& config) const {
  if (auto why = problem_rejection(problem)) return why;
  if (auto why = params_rejection(variant(), config, param_names())) return why;
  const int64_t keys = config.at("KEYS");
  if (keys != 16 && keys != 32 && keys != 64) return fmt::format("KEYS={} is not 16, 32 or 64", keys);
  const int64_t warps = config.at("WARPS");
  if (warps != 1 && warps != 2 && warps != 4 && warps != 8)
    return fmt::format("WARPS={} is not 1, 2, 4 or 8", warps);
  const int64_t stages = config.at("STAGES");
  if (stages < 2 || stages > kMaxStages)
    return fmt::format("STAGES={} is outside [2, {}]", stages, kMaxStages);
  const int64_t split_k = config.at("SPLIT_K");
  if (split_k < 1 || split_k > kMaxSplitK)
    return fmt::format("SPLIT_K={} is outside [1, {}]", split_k, kMaxSplitK);
  const int64_t bytes = shared_bytes(problem, config);
  if (bytes > kMaxSharedBytes) {
    return fmt::format("WARPS={} x STAGES={} tiles of {} keys need {} bytes of shared memory (at most {})",
                       warps, stages, keys, bytes, kMaxSharedBytes);
  }
  return std::nullopt;
}

std::string DecodeAttentionMmaSpec::canonical_name(const Problem& problem, const Config& config) const {
  return fmt::format("decode_attention.{}{}.{}.k{}.w{}.s{}.sk{}", ktune::to_string(problem.dtype),
                     paged(problem) ? ".paged" : "", variant(), config.at("KEYS"), config.at("WARPS"),
                     config.at("STAGES"), config.at("SPLIT_K"));
}

Config DecodeAttentionMmaSpec::default_config(const Problem& problem) const {
  const Config base = DecodeAttentionSpec::default_config(problem);
  return {"mma", {{"KEYS", 16}, {"WARPS", 4}, {"STAGES", 3}, {"SPLIT_K", base.at("SPLIT_K")}}};
}

std::string DecodeAttentionMmaSpec::main_kernel(const Problem& problem, const Config& config) const {
  return fmt::format("ktune_decode_attention_mma<{},{},{},{},{},{},{}>", problem.dim("head_dim"),
                     heads_per_block(problem), config.at("KEYS"), config.at("WARPS"), config.at("STAGES"),
                     paged(problem) ? "true" : "false", ktune::cuda_type_name(problem.dtype));
}

LaunchDims DecodeAttentionMmaSpec::main_dims(const Problem& problem, const Config& config) const {
  LaunchDims dims;
  dims.block = {u32(32 * config.at("WARPS")), 1, 1};
  dims.dynamic_smem_bytes = u32(shared_bytes(problem, config));
  return dims;
}

}  // namespace ktune::kernel_templates
