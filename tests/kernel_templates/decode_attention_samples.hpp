#pragma once
// Samples of decode_attention's config space shared by its nvrtc, gpu and emulation suites. splitkv:
// the corners of (BLOCK_N, WARPS, SPLIT_K): one warp and eight, one to eight 16-byte loads a lane,
// no split, splits that leave some empty, a SPLIT_K that is not a power of two. mma_cluster: clusters
// of 2, 3, 4, 8 and 16 (non-portable) with one to eight warps. mma: the three tile
// sizes, one warp to eight, rings of 2 to 4 stages, the same kinds of splits.

#include <vector>

#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates::testing {

inline std::vector<Config> decode_attention_samples() {
  // With head_dim 128 (2 keys a warp load) U = BLOCK_N / (2 WARPS); with 64 (4 keys) half that.
  const int64_t s[][3] = {{16, 1, 1}, {8, 4, 5},    {32, 4, 8}, {64, 4, 16},
                          {64, 8, 3}, {128, 8, 32}, {16, 2, 1}, {32, 2, 64}};
  std::vector<Config> out;
  for (const auto& c : s) out.push_back({"splitkv", {{"BLOCK_N", c[0]}, {"WARPS", c[1]}, {"SPLIT_K", c[2]}}});
  return out;
}

inline std::vector<Config> decode_attention_mma_samples() {
  // (KEYS, WARPS, STAGES, SPLIT_K); at head_dim 128 each fits 227 KiB of shared memory.
  const int64_t s[][4] = {{16, 1, 2, 1}, {32, 4, 3, 5},  {64, 2, 2, 8},
                          {16, 8, 3, 3}, {32, 2, 4, 64}, {64, 1, 3, 1}};
  std::vector<Config> out;
  for (const auto& c : s) {
    out.push_back({"mma", {{"KEYS", c[0]}, {"WARPS", c[1]}, {"STAGES", c[2]}, {"SPLIT_K", c[3]}}});
  }
  return out;
}

inline std::vector<Config> decode_attention_mma_cluster_samples() {
  // (KEYS, WARPS, STAGES, SPLIT_K = the cluster size).
  const int64_t s[][4] = {{16, 4, 3, 8}, {32, 1, 2, 3}, {64, 2, 3, 4}, {16, 8, 3, 2}, {32, 4, 2, 8}, {16, 2, 2, 16}};
  std::vector<Config> out;
  for (const auto& c : s) {
    out.push_back({"mma_cluster", {{"KEYS", c[0]}, {"WARPS", c[1]}, {"STAGES", c[2]}, {"SPLIT_K", c[3]}}});
  }
  return out;
}

/// The tensor-core templates' samples (mma and mma_cluster): every one fits every problem.
inline std::vector<Config> decode_attention_tensor_core_samples() {
  std::vector<Config> out = decode_attention_mma_samples();
  for (Config& c : decode_attention_mma_cluster_samples()) out.push_back(std::move(c));
  return out;
}

/// Every template's samples.
inline std::vector<Config> decode_attention_all_samples() {
  std::vector<Config> out = decode_attention_samples();
  for (Config& c : decode_attention_tensor_core_samples()) out.push_back(std::move(c));
  return out;
}

inline Problem decode_problem(int64_t batch, int64_t hq, int64_t hkv, int64_t seq, int64_t d) {
  return {{{"batch", batch}, {"heads_q", hq}, {"heads_kv", hkv}, {"seq", seq}, {"head_dim", d}},
          DType::kBF16,
          ""};
}

}  // namespace ktune::kernel_templates::testing
