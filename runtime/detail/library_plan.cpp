#include "runtime/detail/library_plan.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::runtime::detail {

namespace {
constexpr std::size_t kAlignBytes = 16;
}  // namespace

bool library_config_serves(const PlanKey& key, const ktune::Config& config) {
  if (!harness::is_cublaslt_config(config) || key.op != OpKind::kGemm) return false;
  const bool dtype_ok = key.dtype == DType::kBF16 || key.dtype == DType::kF16 || key.dtype == DType::kF32;
  const std::string layout = make_problem(key).layout;
  return dtype_ok && (layout == "nt" || layout == "nn");
}

LibraryGemmPlan::LibraryGemmPlan(harness::CublasLtGemm& gemm, std::mutex& mutex, const PlanKey& key,
                                 const ktune::Config& config)
    : gemm_(&gemm), mutex_(&mutex) {
  if (!library_config_serves(key, config)) {
    throw Error(ErrorKind::kBadInput, fmt::format("{}: a library algorithm does not serve it", describe(key)));
  }
  const kernel_templates::Problem p = make_problem(key);
  algorithm_ = harness::CublasLtAlgorithm::from_config(config);
  problem_.dtype = key.dtype;
  problem_.b_nt = p.layout == "nt";
  problem_.m = p.dim("m");
  problem_.n = p.dim("n");
  problem_.k = p.dim("k");
  std::lock_guard lock(*mutex_);
  if (const std::string why = gemm_->rejection(problem_, algorithm_); !why.empty())
    throw Error(ErrorKind::kBadInput, why);
  workspace_bytes_ = gemm_->workspace_bytes(problem_, algorithm_);
}

harness::CublasGemmProblem LibraryGemmPlan::problem_for(std::span<const double> row_strides) const {
  harness::CublasGemmProblem p = problem_;
  p.lda = static_cast<int64_t>(row_strides[0]);
  p.ldb = static_cast<int64_t>(row_strides[1]);
  p.ldc = static_cast<int64_t>(row_strides[2]);
  return p;
}

bool LibraryGemmPlan::serves_strides(std::span<const double> row_strides) const {
  if (row_strides.size() < 3) return false;
  const std::size_t e = size_of(problem_.dtype);
  for (std::size_t i = 0; i < 3; ++i)
    if ((static_cast<std::size_t>(row_strides[i]) * e) % kAlignBytes != 0) return false;
  return true;
}

bool LibraryGemmPlan::serves(std::span<const void* const> slots, std::span<const double> row_strides) const {
  if (slots.size() < 3 || !serves_strides(row_strides)) return false;
  for (std::size_t i = 0; i < 3; ++i)
    if (reinterpret_cast<uintptr_t>(slots[i]) % kAlignBytes != 0) return false;
  return true;
}

void LibraryGemmPlan::run(std::span<const void* const> slots, std::span<const double> row_strides,
                          CUdeviceptr workspace, std::size_t workspace_size, CUstream stream) const {
  const auto ptr = [&](std::size_t i) { return reinterpret_cast<CUdeviceptr>(slots[i]); };
  std::lock_guard lock(*mutex_);
  gemm_->run(problem_for(row_strides), algorithm_, ptr(0), ptr(1), ptr(2), stream, workspace, workspace_size);
}

}  // namespace ktune::runtime::detail
