#pragma once
// Samples of the wgmma template's config space shared by its unit, nvrtc and gpu suites: the large
// tiles the M >= 512 benchmarks lean on (128x256 and 128x128, two warpgroups), a one-warpgroup
// 64x128 tile, and the corners (64x64 with 3 stages, the fewest; 256x64 with four warpgroups; 8
// stages). Valid for f16 and bf16, both layouts, with and without epilogues; for the
// warp-specialised variant the corners are 2 stages and 128x64 (it takes BLOCK_M 64 and 128 only),
// for the pair variant 3 stages and BLOCK_N 128 (its least), "nt" only.

#include <string>
#include <vector>

#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates::testing {

inline Config wgmma_config(int64_t bm, int64_t bn, int64_t stages, int64_t swizzle,
                           const std::string& variant = "wgmma") {
  return {variant,
          {{"BLOCK_M", bm},
           {"BLOCK_N", bn},
           {"BLOCK_K", 64},
           {"STAGES", stages},
           {"SPLIT_K", 1},
           {"SWIZZLE", swizzle}}};
}

/// The configs the big-M benchmarks lean on: they must compile without spills. `variant`: "wgmma"
/// or "wgmma_ws" (the warp-specialised pipeline).
inline std::vector<Config> wgmma_main_samples(const std::string& variant = "wgmma") {
  return {wgmma_config(128, 256, 4, 8, variant), wgmma_config(128, 128, 5, 8, variant),
          wgmma_config(64, 128, 6, 8, variant)};
}

/// Main samples plus the corners: the fewest stages, the most warpgroups, 8 stages.
inline std::vector<Config> wgmma_samples(const std::string& variant = "wgmma") {
  auto out = wgmma_main_samples(variant);
  if (variant == "wgmma_pair") {  // BLOCK_N >= 128, STAGES >= 3
    out.push_back(wgmma_config(64, 128, 3, 1, variant));
    out.push_back(wgmma_config(128, 128, 3, 3, variant));
    out.push_back(wgmma_config(64, 128, 8, 2, variant));
    return out;
  }
  const bool ws = variant == "wgmma_ws";
  out.push_back(wgmma_config(64, 64, ws ? 2 : 3, 1, variant));
  out.push_back(ws ? wgmma_config(128, 64, 3, 3, variant) : wgmma_config(256, 64, 4, 3, variant));
  out.push_back(wgmma_config(64, 64, 8, 2, variant));
  return out;
}

/// The variants of the Hopper template.
inline std::vector<std::string> wgmma_variants() { return {"wgmma", "wgmma_ws", "wgmma_pair"}; }

/// `layout` as `variant` takes it: the pair kernel has no "nn" form, so it gets the "nt" one.
inline std::string wgmma_layout(const std::string& variant, const std::string& layout) {
  if (variant != "wgmma_pair" || layout.rfind("nn", 0) != 0) return layout;
  return "nt" + layout.substr(2);
}

}  // namespace ktune::kernel_templates::testing
