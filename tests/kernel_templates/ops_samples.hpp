#pragma once
// Samples of the operators' config spaces shared by the nvrtc and gpu suites: at most eight
// configs a kernel, covering the corners (a warp a row and 1024-thread rows, several rows a block,
// every vector width, register and two-pass / one-pass and online). VEC is given in bytes and
// turned into elements for the dtype.

#include <vector>

#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates::testing {

inline int64_t vec_elems(int64_t bytes, DType dtype) {
  const auto es = static_cast<int64_t>(ktune::size_of(dtype));
  return bytes >= es ? bytes / es : 1;
}

inline std::vector<Config> rmsnorm_samples(DType dtype) {
  const int64_t s[][4] = {{32, 4, 16, 1},  {64, 2, 8, 1},   {128, 1, 16, 1}, {256, 1, 16, 0},
                          {512, 1, 16, 1}, {1024, 1, 4, 0}, {32, 8, 16, 0},  {256, 2, 4, 1}};
  std::vector<Config> out;
  for (const auto& c : s) {
    out.push_back(
        {"rowwise", {{"THREADS", c[0]}, {"ROWS", c[1]}, {"VEC", vec_elems(c[2], dtype)}, {"REG", c[3]}}});
  }
  return out;
}

/// The bulk variant of rmsnorm: THREADS, STAGES, STEPS, WRITE (some STEPS leave a partial last
/// block, some THREADS exceed a short row's vectors).
inline std::vector<Config> rmsnorm_bulk_samples(DType) {
  const int64_t s[][4] = {{128, 2, 1, 0}, {256, 3, 4, 1},  {512, 4, 16, 0}, {1024, 2, 8, 0},
                          {32, 3, 3, 1},  {256, 8, 32, 1}, {64, 4, 5, 0},   {128, 3, 2, 1}};
  std::vector<Config> out;
  for (const auto& c : s) {
    out.push_back({"bulk", {{"THREADS", c[0]}, {"STAGES", c[1]}, {"STEPS", c[2]}, {"WRITE", c[3]}}});
  }
  return out;
}

/// The cluster variant of softmax: THREADS, CLUSTER.
inline std::vector<Config> softmax_cluster_samples(DType) {
  const int64_t s[][2] = {{256, 8}, {512, 4}, {1024, 2}, {128, 3}, {32, 1}, {512, 8}};
  std::vector<Config> out;
  for (const auto& c : s) out.push_back({"cluster", {{"THREADS", c[0]}, {"CLUSTER", c[1]}}});
  return out;
}

/// THREADS (lanes a head), HEADS, VEC in elements (even), ITEMS, OCC; some do not divide
/// head_dim 64.
inline std::vector<Config> rope_samples() {
  const int64_t s[][5] = {{16, 2, 2, 1, 0},    {16, 4, 4, 1, 1152}, {4, 8, 8, 1, 0},  {32, 1, 2, 4, 0},
                          {16, 8, 4, 1, 1280}, {2, 16, 8, 1, 0},    {8, 16, 2, 4, 0}, {32, 4, 4, 2, 0}};
  std::vector<Config> out;
  for (const auto& c : s) {
    out.push_back(
        {"headwise", {{"THREADS", c[0]}, {"HEADS", c[1]}, {"VEC", c[2]}, {"ITEMS", c[3]}, {"OCC", c[4]}}});
  }
  return out;
}

/// rope_append: THREADS (lanes a head), HEADS, VEC in elements (even), ITEMS; some do not divide
/// a rotary half of 32 or a tail of 64.
inline std::vector<Config> rope_append_samples() {
  const int64_t s[][4] = {{4, 16, 2, 1}, {8, 4, 4, 1},  {4, 8, 8, 2},  {32, 1, 2, 4},
                          {16, 8, 4, 1}, {2, 16, 8, 1}, {8, 16, 2, 4}, {1, 64, 2, 2}};
  std::vector<Config> out;
  for (const auto& c : s) {
    out.push_back({"headwise", {{"THREADS", c[0]}, {"HEADS", c[1]}, {"VEC", c[2]}, {"ITEMS", c[3]}}});
  }
  return out;
}

/// The bulk variant of rmsnorm_rope: THREADS, STAGES, STEPS (some leave a partial last block).
inline std::vector<Config> rope_bulk_samples() {
  const int64_t s[][3] = {{256, 3, 4}, {128, 2, 1}, {512, 4, 3}, {32, 8, 2}, {96, 3, 16}, {1024, 2, 5}};
  std::vector<Config> out;
  for (const auto& c : s) out.push_back({"bulk", {{"THREADS", c[0]}, {"STAGES", c[1]}, {"STEPS", c[2]}}});
  return out;
}

inline std::vector<Config> softmax_samples(DType dtype) {
  const int64_t s[][4] = {{32, 4, 16, 0}, {128, 1, 16, 0}, {256, 1, 8, 1}, {1024, 1, 16, 1},
                          {64, 2, 4, 0},  {512, 1, 16, 0}, {32, 8, 16, 1}, {256, 2, 16, 1}};
  std::vector<Config> out;
  for (const auto& c : s) {
    out.push_back(
        {"rowwise", {{"THREADS", c[0]}, {"ROWS", c[1]}, {"VEC", vec_elems(c[2], dtype)}, {"ONLINE", c[3]}}});
  }
  return out;
}

/// The long-row modes of softmax: staged (ONLINE 2) and split rows (SPLIT > 1, online), VEC in bytes.
inline std::vector<Config> softmax_long_samples(DType dtype) {
  const int64_t s[][4] = {{256, 16, 2, 1},  {1024, 16, 2, 1}, {128, 8, 2, 1},   {256, 16, 1, 4},
                          {512, 16, 1, 16}, {128, 8, 1, 3},   {1024, 16, 1, 2}, {64, 16, 1, 64}};
  std::vector<Config> out;
  for (const auto& c : s) {
    out.push_back({"rowwise",
                   {{"THREADS", c[0]},
                    {"ROWS", 1},
                    {"VEC", vec_elems(c[1], dtype)},
                    {"ONLINE", c[2]},
                    {"SPLIT", c[3]}}});
  }
  return out;
}

inline std::vector<Config> swiglu_samples(DType dtype) {
  const int64_t s[][3] = {{256, 16, 1}, {128, 16, 2}, {512, 8, 1}, {64, 4, 4}, {256, 16, 4}, {1024, 16, 1}};
  std::vector<Config> out;
  for (const auto& c : s) {
    out.push_back({"elementwise", {{"THREADS", c[0]}, {"VEC", vec_elems(c[1], dtype)}, {"ITEMS", c[2]}}});
  }
  return out;
}

inline const std::vector<DType>& ops_dtypes() {
  static const std::vector<DType> kAll = {DType::kF32, DType::kF16, DType::kBF16};
  return kAll;
}

}  // namespace ktune::kernel_templates::testing
