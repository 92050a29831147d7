#pragma once
// Samples of the mma template's config space shared by the tcgemm unit, nvrtc and gpu suites: the
// main large tiles (128x256 / 256x128 with 8 warps), a deep-BLOCK_K square tile, skinny decode tiles
// with deterministic and atomic split-K, and small tiles with BLOCK_K 16 and 5 stages. Valid for f16
// and bf16, both layouts.

#include <vector>

#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates::testing {

inline Config mma_config(int64_t bm, int64_t bn, int64_t bk, int64_t wm, int64_t wn, int64_t stages,
                         int64_t split_k, int64_t mode, int64_t swizzle) {
  return {"mma",
          {{"BLOCK_M", bm},
           {"BLOCK_N", bn},
           {"BLOCK_K", bk},
           {"WARPS_M", wm},
           {"WARPS_N", wn},
           {"STAGES", stages},
           {"SPLIT_K", split_k},
           {"SPLIT_K_MODE", mode},
           {"SWIZZLE", swizzle}}};
}

/// The configs the big-M benchmarks lean on: they must compile without spills.
inline std::vector<Config> mma_main_samples() {
  return {
      mma_config(128, 256, 32, 2, 4, 3, 1, 0, 8),
      mma_config(256, 128, 32, 4, 2, 3, 1, 0, 8),
      mma_config(128, 128, 32, 2, 2, 4, 1, 0, 4),
  };
}

/// Main samples plus the corners: split-K (deterministic and atomic), BLOCK_K 16, 64 and 128, 5 stages.
/// (128x128x64 with 64x64 warp tiles spills 80 bytes on sm_90: BLOCK_K 64 wants smaller warp tiles.)
inline std::vector<Config> mma_samples() {
  auto out = mma_main_samples();
  out.push_back(mma_config(16, 64, 128, 1, 4, 4, 4, 0, 1));
  out.push_back(mma_config(32, 128, 64, 1, 4, 3, 8, 1, 1));
  out.push_back(mma_config(64, 64, 16, 2, 2, 2, 2, 0, 2));
  out.push_back(mma_config(64, 32, 32, 4, 1, 5, 1, 0, 3));
  return out;
}

inline Config mma_cluster_config(int64_t bm, int64_t bn, int64_t bk, int64_t wm, int64_t wn, int64_t stages,
                                 int64_t split_k, int64_t swizzle) {
  return {"mma_cluster",
          {{"BLOCK_M", bm},
           {"BLOCK_N", bn},
           {"BLOCK_K", bk},
           {"WARPS_M", wm},
           {"WARPS_N", wn},
           {"STAGES", stages},
           {"SPLIT_K", split_k},
           {"SWIZZLE", swizzle}}};
}

/// Samples of the cluster split-K template (sm_90): clusters of 2, 4 and 8; a decode tile, a tile whose
/// partial tile is larger than its pipeline (64x128 with BLOCK_K 32, 2 stages), deep BLOCK_K and a
/// grouped order over several block-rows.
inline std::vector<Config> mma_cluster_samples() {
  return {
      mma_cluster_config(16, 64, 128, 1, 4, 4, 4, 1),
      mma_cluster_config(16, 128, 128, 1, 4, 3, 8, 1),
      mma_cluster_config(64, 128, 32, 2, 2, 2, 2, 8),
      mma_cluster_config(32, 64, 64, 1, 4, 4, 4, 2),
  };
}

}  // namespace ktune::kernel_templates::testing
