#pragma once
// The built-in config sweep of ktune_gemm_bench, by shape class: the few mma configs worth timing
// for decode (M <= 16: one 16-row tile, split-K so 132 SMs stream the weights), mid M (<= 256:
// 32-128 row tiles, some split-K for narrow N) and large M (128x256 / 256x128 tiles with 8 warps,
// 64x64 warp tiles, BLOCK_K 32/64, 3-4 stages, grouped order). From M >= 128 the Hopper wgmma
// template joins (sm_90a only: variant "wgmma", configs without warps or split-K mode; the bench
// looks each config's spec up by its variant).

#include <vector>

#include "kernel_templates/kernel_spec.hpp"

namespace ktune::bench {

inline ktune::Config mma(int64_t bm, int64_t bn, int64_t bk, int64_t wm, int64_t wn, int64_t stages,
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

inline ktune::Config wgmma(int64_t bm, int64_t bn, int64_t stages, int64_t swizzle, int64_t split_k = 1,
                           const char* variant = "wgmma") {
  return {variant,
          {{"BLOCK_M", bm},
           {"BLOCK_N", bn},
           {"BLOCK_K", 64},
           {"STAGES", stages},
           {"SPLIT_K", split_k},
           {"SWIZZLE", swizzle}}};
}

/// The wgmma configs for a problem with `m` rows (none below 128: one 64-row warpgroup tile would
/// mostly compute padding). 128x256 (4 stages, the most that fit 227 KiB) and 128x128 / 64x256 /
/// 64x128 with deeper pipelines; group 8 and 16; 64x64 for narrow N (N = 1024: 128x128 tiles would
/// leave most of the 132 SMs idle at M = 512).
inline std::vector<ktune::Config> wgmma_sweep(int64_t m) {
  if (m < 128) return {};
  if (m <= 256) {
    return {wgmma(64, 128, 6, 8),    wgmma(64, 256, 5, 8),   wgmma(128, 128, 5, 8),   wgmma(128, 256, 4, 8),
            wgmma(64, 128, 4, 8),    wgmma(64, 64, 4, 8),    wgmma(128, 64, 4, 8),    wgmma(64, 128, 6, 8, 2),
            wgmma(64, 128, 6, 8, 4), wgmma(64, 64, 6, 8, 4), wgmma(128, 128, 5, 8, 4)};
  }
  // The 4-stage 64x128 / 128x64 / 64x64 tiles fit two or three blocks an SM (<= 96 KiB of shared
  // memory, <= 32K registers): at M = 512 they give 256+ blocks, one full wave on 132 SMs.
  std::vector<ktune::Config> out = {
      wgmma(128, 256, 4, 8), wgmma(128, 256, 4, 16), wgmma(128, 256, 3, 8), wgmma(128, 128, 5, 8),
      wgmma(128, 128, 6, 8), wgmma(64, 256, 5, 8),   wgmma(64, 128, 6, 8),  wgmma(64, 64, 8, 8),
      wgmma(64, 128, 4, 8),  wgmma(128, 64, 4, 8),   wgmma(64, 64, 4, 8),
  };
  // Split-K for shapes whose M x N gives few tiles (M = 512: 32 tiles of 128x128 at N = 1024, 128 at
  // N = 4096; M = 2048 at N = 512: 64); the spec rejects splits the shape's K cannot feed.
  for (const auto& c : {wgmma(128, 128, 6, 8, 2), wgmma(128, 128, 6, 8, 4), wgmma(128, 256, 4, 8, 2),
                        wgmma(64, 128, 6, 8, 2), wgmma(64, 128, 6, 8, 4), wgmma(128, 128, 6, 8, 3)}) {
    out.push_back(c);
  }
  // The TMA-fed kernel (variant "wgmma_tma").
  for (const auto& c : {wgmma(128, 256, 4, 8, 1, "wgmma_tma"), wgmma(128, 256, 4, 16, 1, "wgmma_tma"),
                        wgmma(128, 256, 3, 8, 1, "wgmma_tma"), wgmma(128, 128, 6, 8, 1, "wgmma_tma"),
                        wgmma(64, 256, 4, 8, 1, "wgmma_tma"), wgmma(64, 128, 6, 8, 1, "wgmma_tma"),
                        wgmma(128, 128, 6, 8, 2, "wgmma_tma"), wgmma(128, 256, 4, 8, 2, "wgmma_tma")}) {
    out.push_back(c);
  }
  return out;
}

/// 14-16 configs for a problem with `m` rows.
inline std::vector<ktune::Config> mma_only_sweep(int64_t m) {
  if (m <= 16) {
    return {
        mma(16, 64, 128, 1, 4, 4, 1, 0, 1),  mma(16, 64, 128, 1, 4, 4, 2, 0, 1),
        mma(16, 64, 128, 1, 4, 4, 4, 0, 1),  mma(16, 64, 128, 1, 4, 4, 8, 0, 1),
        mma(16, 64, 128, 1, 4, 4, 4, 1, 1),  mma(16, 64, 128, 1, 4, 4, 8, 1, 1),
        mma(16, 128, 128, 1, 4, 4, 1, 0, 1), mma(16, 128, 128, 1, 4, 4, 2, 0, 1),
        mma(16, 128, 128, 1, 4, 4, 4, 0, 1), mma(16, 128, 128, 1, 4, 4, 4, 1, 1),
        mma(16, 64, 64, 1, 2, 6, 1, 0, 1),   mma(16, 64, 64, 1, 2, 6, 4, 0, 1),
        mma(16, 128, 64, 1, 4, 4, 2, 0, 1),  mma(16, 128, 64, 1, 4, 4, 8, 1, 1),
        mma(16, 32, 128, 1, 2, 4, 1, 0, 1),  mma(16, 32, 128, 1, 2, 4, 4, 0, 1),
    };
  }
  if (m <= 256) {
    return {
        mma(64, 128, 64, 2, 2, 3, 1, 0, 8),  mma(64, 64, 64, 2, 2, 4, 1, 0, 8),
        mma(128, 128, 32, 2, 2, 4, 1, 0, 8), mma(128, 128, 32, 2, 4, 4, 1, 0, 8),
        mma(64, 128, 64, 2, 2, 3, 2, 0, 8),  mma(64, 64, 64, 2, 2, 4, 2, 0, 8),
        mma(64, 64, 64, 2, 2, 4, 4, 0, 8),   mma(128, 128, 32, 2, 2, 4, 2, 0, 8),
        mma(128, 256, 32, 2, 4, 3, 1, 0, 8), mma(64, 256, 32, 1, 4, 4, 1, 0, 8),
        mma(32, 128, 64, 1, 4, 4, 1, 0, 8),  mma(32, 128, 64, 1, 4, 4, 2, 0, 8),
        mma(128, 64, 64, 2, 2, 4, 1, 0, 8),  mma(128, 128, 64, 2, 4, 3, 1, 0, 8),
    };
  }
  return {
      mma(128, 256, 32, 2, 4, 3, 1, 0, 8),
      mma(128, 256, 32, 2, 4, 4, 1, 0, 8),
      mma(256, 128, 32, 4, 2, 3, 1, 0, 8),
      mma(256, 128, 32, 4, 2, 4, 1, 0, 8),
      mma(128, 128, 32, 2, 2, 4, 1, 0, 8),
      mma(128, 128, 64, 2, 4, 3, 1, 0, 8),
      mma(128, 256, 64, 2, 4, 3, 1, 0, 8),
      mma(256, 128, 64, 4, 2, 3, 1, 0, 8),
      mma(128, 256, 32, 2, 4, 3, 1, 0, 16),
      mma(128, 256, 32, 2, 4, 3, 1, 0, 4),
      mma(128, 256, 32, 2, 4, 4, 1, 0, 1),
      mma(256, 128, 32, 4, 2, 4, 1, 0, 16),
      mma(128, 128, 64, 2, 2, 3, 1, 0, 8),
      mma(128, 256, 32, 4, 2, 3, 1, 0, 8),
      // split-K for narrow N at M = 512 (k_proj: N = 512-1024 gives 32-128 output tiles)
      mma(64, 64, 64, 2, 2, 4, 2, 0, 8),
      mma(64, 64, 64, 2, 2, 4, 4, 0, 8),
      mma(128, 128, 32, 2, 2, 4, 2, 0, 8),
      mma(64, 128, 64, 2, 2, 3, 2, 0, 8),
  };
}

inline ktune::Config gemv(int64_t bk, int64_t split_k, int64_t warps, int64_t rows) {
  return {"gemv", {{"BLOCK_K", bk}, {"SPLIT_K", split_k}, {"WARPS", warps}, {"ROWS_PER_BLOCK", rows}}};
}

/// The GEMV template's configs for M <= 16 ("nt" only; none above: the template serves skinny M).
/// Around the quick preset's H200 winner (k512, sk1, w4, r8) in block K, split-K and rows a block.
inline std::vector<ktune::Config> gemv_sweep(int64_t m) {
  if (m > 16) return {};
  return {gemv(512, 1, 4, 8),  gemv(512, 1, 4, 4),  gemv(1024, 1, 8, 4), gemv(512, 2, 4, 4),
          gemv(256, 1, 2, 8),  gemv(1024, 2, 8, 2), gemv(2048, 1, 8, 2), gemv(512, 4, 4, 2),
          gemv(1024, 1, 4, 8), gemv(2048, 2, 8, 4)};
}

/// The sweep ktune_gemm_bench times: the mma configs, then the wgmma and GEMV ones.
inline std::vector<ktune::Config> mma_sweep(int64_t m) {
  std::vector<ktune::Config> out = mma_only_sweep(m);
  for (auto& c : wgmma_sweep(m)) out.push_back(std::move(c));
  for (auto& c : gemv_sweep(m)) out.push_back(std::move(c));
  return out;
}

}  // namespace ktune::bench
