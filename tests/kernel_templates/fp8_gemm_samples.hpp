#pragma once
// Samples of the fp8_gemm config space shared by the fp8 unit, nvrtc, gpu suites and the benchmark:
// the large tiles the big-M shapes lean on (no spills), a deep-BLOCK_K tile, skinny decode tiles with
// split-K, and small tiles with BLOCK_K 32 and 5 stages. Every one fits sm_89's 99 KiB of shared
// memory.

#include <cstdint>
#include <vector>

#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates::testing {

inline Config fp8_config(int64_t bm, int64_t bn, int64_t bk, int64_t wm, int64_t wn, int64_t stages,
                         int64_t split_k, int64_t swizzle) {
  return {"mma",
          {{"BLOCK_M", bm},
           {"BLOCK_N", bn},
           {"BLOCK_K", bk},
           {"WARPS_M", wm},
           {"WARPS_N", wn},
           {"STAGES", stages},
           {"SPLIT_K", split_k},
           {"SWIZZLE", swizzle}}};
}

/// The configs the big-M shapes lean on: they must compile without spills.
inline std::vector<Config> fp8_main_samples() {
  return {
      fp8_config(128, 256, 64, 2, 4, 3, 1, 8),
      fp8_config(256, 128, 64, 4, 2, 3, 1, 8),
      fp8_config(128, 128, 64, 2, 2, 4, 1, 8),
  };
}

/// Main samples plus the corners: BLOCK_K 32, 128 and 256, split-K 2, 4 and 8, 2 and 5 stages.
inline std::vector<Config> fp8_samples() {
  auto out = fp8_main_samples();
  out.push_back(fp8_config(64, 128, 128, 2, 2, 3, 1, 1));
  out.push_back(fp8_config(16, 64, 256, 1, 4, 3, 4, 1));
  out.push_back(fp8_config(32, 128, 64, 1, 4, 4, 8, 1));
  out.push_back(fp8_config(64, 64, 32, 2, 2, 2, 2, 2));
  out.push_back(fp8_config(64, 32, 32, 4, 1, 5, 1, 3));
  return out;
}

/// The wgmma variant (sm_90a): {BLOCK_M, BLOCK_N, STAGES, SWIZZLE} over both warpgroup counts, every
/// wgmma N, 3 to 6 stages, grouped and plain order.
inline std::vector<Config> fp8_wgmma_samples() {
  const int64_t s[][4] = {{128, 256, 4, 8}, {64, 128, 6, 1},  {128, 64, 5, 8},
                          {64, 64, 3, 2},   {128, 128, 4, 8}, {64, 256, 3, 8}};
  std::vector<Config> out;
  for (const auto& c : s) {
    out.push_back(
        {"wgmma_tma",
         {{"BLOCK_M", c[0]}, {"BLOCK_N", c[1]}, {"BLOCK_K", 128}, {"STAGES", c[2]}, {"SWIZZLE", c[3]}}});
  }
  return out;
}

/// An fp8_gemm problem; layout "nt" (per-tensor scales) or "nt+rowcol".
inline Problem fp8_problem(int64_t m, int64_t n, int64_t k, const char* layout = "nt") {
  return {{{"m", m}, {"n", n}, {"k", k}}, DType::kFP8E4M3, layout};
}

}  // namespace ktune::kernel_templates::testing
