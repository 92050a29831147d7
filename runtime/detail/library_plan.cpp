#include "runtime/detail/library_plan.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::runtime::detail {

namespace {
constexpr std::size_t kAlignBytes = 16;

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kAlignBytes == 0; }
}  // namespace

bool library_config_serves(const PlanKey& key, const ktune::Config& config) {
  if (!harness::is_cublaslt_config(config)) return false;
  const kernel_templates::Problem p = make_problem(key);
  if (key.op == OpKind::kFp8Gemm) return p.layout == "nt" && p.dim("n") % 16 == 0 && p.dim("k") % 16 == 0;
  if (key.op != OpKind::kGemm) return false;
  const bool dtype_ok = key.dtype == DType::kBF16 || key.dtype == DType::kF16 || key.dtype == DType::kF32;
  return dtype_ok && harness::is_library_gemm_layout(p.layout);
}

LibraryGemmPlan::LibraryGemmPlan(LibraryHandles& handles, const PlanKey& key, const ktune::Config& config)
    : handles_(&handles), fp8_(key.op == OpKind::kFp8Gemm) {
  if (!library_config_serves(key, config)) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("{}: a library algorithm does not serve it", describe(key)));
  }
  const kernel_templates::Problem p = make_problem(key);
  algorithm_ = harness::CublasLtAlgorithm::from_config(config);
  std::lock_guard lock(handles_->mutex);
  std::string why;
  if (fp8_) {
    fp8_problem_ = {p.dim("m"), p.dim("n"), p.dim("k"), false};
    if (!handles_->fp8) handles_->fp8 = std::make_unique<harness::CublasLtFp8Gemm>();
    why = handles_->fp8->rejection(fp8_problem_, algorithm_);
    if (why.empty()) workspace_bytes_ = handles_->fp8->workspace_bytes(fp8_problem_, algorithm_);
  } else {
    problem_.dtype = key.dtype;
    problem_.b_nt = harness::library_layout_nt(p.layout);
    problem_.bias = harness::library_layout_bias(p.layout);
    problem_.m = p.dim("m");
    problem_.n = p.dim("n");
    problem_.k = p.dim("k");
    if (!handles_->gemm) handles_->gemm = std::make_unique<harness::CublasLtGemm>();
    why = handles_->gemm->rejection(problem_, algorithm_);
    if (why.empty()) workspace_bytes_ = handles_->gemm->workspace_bytes(problem_, algorithm_);
  }
  if (!why.empty()) throw Error(ErrorKind::kBadInput, why);
}

bool LibraryGemmPlan::serves_strides(std::span<const double> row_strides) const {
  if (fp8_) return true;
  if (row_strides.size() < 3) return false;
  const std::size_t e = size_of(problem_.dtype);
  for (std::size_t i = 0; i < 3; ++i)
    if ((static_cast<std::size_t>(row_strides[i]) * e) % kAlignBytes != 0) return false;
  return true;
}

bool LibraryGemmPlan::serves(std::span<const void* const> slots, std::span<const double> row_strides) const {
  if (fp8_) return slots.size() >= 5 && aligned(slots[0]) && aligned(slots[1]) && aligned(slots[4]);
  // gemm's slots: a, b, c, bias (read with the "+bias" layouts only).
  const bool bias_ok = !problem_.bias || (slots.size() >= 4 && aligned(slots[3]));
  return slots.size() >= 3 && serves_strides(row_strides) && aligned(slots[0]) && aligned(slots[1]) &&
         aligned(slots[2]) && bias_ok;
}

void LibraryGemmPlan::run(std::span<const void* const> slots, std::span<const double> row_strides,
                          CUdeviceptr workspace, std::size_t workspace_size, CUstream stream) const {
  const auto ptr = [&](std::size_t i) { return reinterpret_cast<CUdeviceptr>(slots[i]); };
  std::lock_guard lock(handles_->mutex);
  if (fp8_) {
    handles_->fp8->run(fp8_problem_, algorithm_, ptr(0), ptr(1), ptr(2), ptr(3), ptr(4), stream, workspace,
                       workspace_size);
    return;
  }
  harness::CublasGemmProblem p = problem_;
  p.lda = static_cast<int64_t>(row_strides[0]);
  p.ldb = static_cast<int64_t>(row_strides[1]);
  p.ldc = static_cast<int64_t>(row_strides[2]);
  handles_->gemm->run(p, algorithm_, ptr(0), ptr(1), ptr(2), stream, workspace, workspace_size,
                      problem_.bias ? ptr(3) : 0);
}

}  // namespace ktune::runtime::detail
