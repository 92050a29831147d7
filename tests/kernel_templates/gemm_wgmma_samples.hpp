#pragma once
// Samples of the wgmma template's config space shared by its unit, nvrtc and gpu suites: the large
// tiles the M >= 512 benchmarks lean on (128x256 and 128x128, two warpgroups), a one-warpgroup
// 64x128 tile, and the corners (64x64 with 3 stages, the fewest; 256x64 with four warpgroups; 8
// stages), then two split-K configs (3 and 4 splits: valid for K >= 256). Valid for f16 and bf16,
// both layouts, with and without epilogues.

#include <vector>

#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates::testing {

inline Config wgmma_config(int64_t bm, int64_t bn, int64_t stages, int64_t swizzle, int64_t split_k = 1) {
  return {"wgmma",
          {{"BLOCK_M", bm},
           {"BLOCK_N", bn},
           {"BLOCK_K", 64},
           {"STAGES", stages},
           {"SPLIT_K", split_k},
           {"SWIZZLE", swizzle}}};
}

/// The configs the big-M benchmarks lean on: they must compile without spills.
inline std::vector<Config> wgmma_main_samples() {
  return {wgmma_config(128, 256, 4, 8), wgmma_config(128, 128, 5, 8), wgmma_config(64, 128, 6, 8)};
}

/// Main samples plus the corners.
inline std::vector<Config> wgmma_samples() {
  auto out = wgmma_main_samples();
  out.push_back(wgmma_config(64, 64, 3, 1));
  out.push_back(wgmma_config(256, 64, 4, 3));
  out.push_back(wgmma_config(64, 64, 8, 2));
  out.push_back(wgmma_config(128, 128, 4, 8, 3));  // split-K, slices of 2 k tiles (K = 331: 6 tiles)
  out.push_back(wgmma_config(64, 64, 3, 1, 4));    // split-K, uneven slices
  return out;
}

}  // namespace ktune::kernel_templates::testing
