#pragma once
// Samples of the gemm family's config space shared by the nvrtc and gpu suites: six configs a
// template, chosen to cover the corners (small and large tiles and thread tiles, 2 to 4 stages, warp
// layouts 1x2 .. 4x4, split-K 1 to 16 including splits that get no K tile on small K).

#include <string>
#include <vector>

#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates::testing {

inline Config tiled_config(int64_t bm, int64_t bn, int64_t bk, int64_t wm, int64_t wn, int64_t stages,
                           int64_t split_k) {
  return {"tiled",
          {{"BLOCK_M", bm},
           {"BLOCK_N", bn},
           {"BLOCK_K", bk},
           {"WARPS_M", wm},
           {"WARPS_N", wn},
           {"STAGES", stages},
           {"SPLIT_K", split_k}}};
}

inline Config gemv_config(int64_t bk, int64_t split_k, int64_t warps, int64_t rows) {
  return {"gemv", {{"BLOCK_K", bk}, {"SPLIT_K", split_k}, {"WARPS", warps}, {"ROWS_PER_BLOCK", rows}}};
}

/// Valid for every dtype (BLOCK_K a multiple of 8 elements).
inline std::vector<Config> tiled_samples() {
  return {
      tiled_config(64, 64, 32, 2, 2, 3, 1),  tiled_config(128, 128, 32, 2, 2, 3, 1),
      tiled_config(32, 64, 16, 1, 2, 2, 4),  tiled_config(128, 64, 64, 4, 2, 4, 2),
      tiled_config(16, 128, 32, 1, 4, 2, 8), tiled_config(256, 128, 16, 4, 4, 2, 1),
  };
}

/// Valid for every dtype (BLOCK_K a multiple of 32 lanes x 8 elements).
inline std::vector<Config> gemv_samples() {
  return {
      gemv_config(256, 1, 4, 2),  gemv_config(512, 4, 8, 1), gemv_config(256, 2, 2, 4),
      gemv_config(1024, 1, 4, 1), gemv_config(256, 8, 1, 8), gemv_config(512, 16, 8, 2),
  };
}

inline const std::vector<DType>& gemm_dtypes() {
  static const std::vector<DType> kAll = {DType::kF32, DType::kF16, DType::kBF16};
  return kAll;
}

inline Problem gemm_problem(int64_t m, int64_t n, int64_t k, DType dtype, std::string layout) {
  return {{{"m", m}, {"n", n}, {"k", k}}, dtype, std::move(layout)};
}

}  // namespace ktune::kernel_templates::testing
