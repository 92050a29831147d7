#include "kernel_templates/decode_attention/decode_attention_mma_cluster_spec.hpp"

#include <fmt/format.h>

#include "kernel_templates/ops_spec_util.hpp"

namespace ktune::kernel_templates {

std::optional<std::string> DecodeAttentionMmaClusterSpec::arch_rejection(std::string_view arch) const {
  return ops_detail::min_arch_rejection(arch, 90, "the decode_attention mma_cluster template",
                                        "thread block clusters");
}

std::optional<std::string> DecodeAttentionMmaClusterSpec::rejection(const Problem& problem,
                                                                    const Config& config) const {
  if (auto why = DecodeAttentionMmaSpec::rejection(problem, config)) return why;
  const int64_t split_k = config.at("SPLIT_K");
  if (split_k < 2 || split_k > kMaxCluster) {
    return fmt::format("SPLIT_K={} is outside [2, {}] (the splits of one cluster)", split_k, kMaxCluster);
  }
  return std::nullopt;
}

Config DecodeAttentionMmaClusterSpec::default_config(const Problem&) const {
  return {"mma_cluster", {{"KEYS", 16}, {"WARPS", 4}, {"STAGES", 3}, {"SPLIT_K", 8}}};
}

std::string DecodeAttentionMmaClusterSpec::main_kernel(const Problem& problem, const Config& config) const {
  return fmt::format("ktune_decode_attention_mma_cluster<{},{},{},{},{},{},{},{}>", problem.dim("head_dim"),
                     heads_per_block(problem), config.at("KEYS"), config.at("WARPS"), config.at("STAGES"),
                     config.at("SPLIT_K"), paged(problem) ? "true" : "false",
                     ktune::cuda_type_name(problem.dtype));
}

}  // namespace ktune::kernel_templates
