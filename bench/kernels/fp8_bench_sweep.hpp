#pragma once
// The built-in config sweep of ktune_fp8_bench, by shape class: decode (M <= 16: one 16-row tile,
// deep BLOCK_K and split-K so 132 SMs stream the e4m3 weights), mid M (<= 256: 32-128 row tiles)
// and large M (128x256 / 256x128 tiles with 8 warps, 64x64 warp tiles, BLOCK_K 64/128, 3-4 stages,
// grouped order), plus the wgmma variant's tiles (sm_90a) from M > 16. Every config fits 227 KiB of shared
// memory (H200) and compiles without spills for sm_90 (`ktune_fp8_bench --compile-only`: 64x64 warp tiles
// with BLOCK_K 128 spill 80-160 bytes).

#include <vector>

#include "kernel_templates/kernel_spec.hpp"

namespace ktune::bench {

inline ktune::Config fp8(int64_t bm, int64_t bn, int64_t bk, int64_t wm, int64_t wn, int64_t stages,
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

/// A config of the wgmma variant (sm_90a; the bench drops it on other archs).
inline ktune::Config fp8_wgmma(int64_t bm, int64_t bn, int64_t stages, int64_t swizzle) {
  return {"wgmma_tma",
          {{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", 128}, {"STAGES", stages}, {"SWIZZLE", swizzle}}};
}

/// The configs timed for a shape with `m` rows.
inline std::vector<ktune::Config> fp8_sweep(int64_t m) {
  if (m <= 16) {
    return {fp8(16, 64, 256, 1, 4, 4, 1, 1), fp8(16, 64, 256, 1, 4, 4, 2, 1),
            fp8(16, 64, 256, 1, 4, 4, 4, 1), fp8(16, 64, 128, 1, 4, 6, 1, 1),
            fp8(16, 64, 128, 1, 4, 6, 2, 1), fp8(16, 128, 256, 1, 4, 3, 4, 1),
            fp8(16, 64, 128, 1, 2, 6, 2, 1), fp8(16, 32, 256, 1, 2, 4, 1, 1)};
  }
  if (m <= 256) {
    return {
        fp8(64, 128, 128, 2, 2, 3, 1, 8), fp8(64, 128, 128, 2, 2, 3, 2, 8), fp8(128, 128, 64, 2, 2, 4, 1, 8),
        fp8(64, 256, 64, 1, 4, 4, 1, 8),  fp8(32, 128, 128, 1, 4, 4, 1, 8), fp8(128, 128, 128, 2, 4, 3, 1, 8),
        fp8(128, 256, 64, 2, 4, 3, 1, 8), fp8_wgmma(64, 128, 6, 8),         fp8_wgmma(64, 64, 6, 8),
        fp8_wgmma(128, 128, 5, 8),        fp8_wgmma(64, 256, 4, 8),         fp8_wgmma(128, 64, 6, 8)};
  }
  return {
      fp8(128, 256, 64, 2, 4, 3, 1, 8), fp8(128, 256, 64, 2, 4, 4, 1, 8), fp8(256, 128, 64, 4, 2, 3, 1, 8),
      fp8(256, 128, 64, 4, 2, 4, 1, 8), fp8(128, 128, 64, 2, 2, 4, 1, 8), fp8(128, 128, 128, 2, 4, 3, 1, 8),
      fp8(128, 256, 64, 2, 4, 3, 1, 1), fp8_wgmma(128, 256, 4, 8),        fp8_wgmma(128, 256, 3, 8),
      fp8_wgmma(128, 128, 6, 8),        fp8_wgmma(128, 128, 4, 8),        fp8_wgmma(64, 256, 4, 8),
      fp8_wgmma(128, 256, 4, 1),        fp8_wgmma(64, 128, 6, 8)};
}

}  // namespace ktune::bench
