#pragma once
/// A gemm key whose tuned winner is a cuBLASLt algorithm (a library candidate of the sweep,
/// tuner/library_candidates.hpp) is served through the dlopen'd cuBLASLt with that algorithm:
/// restored and checked once when the plan is built (another library version, or an algorithm the
/// library refuses here, leaves the key to the default config), then one cublasLtMatmul per call
/// with the call's pointers and row strides. Calls whose pointers or row strides are not 16-byte
/// aligned go to the default config instead (the library's algorithms assume aligned operands).

#include <cuda.h>

#include <cstddef>
#include <mutex>
#include <span>

#include "core/config.hpp"
#include "harness/cublaslt_algorithm.hpp"
#include "harness/cublaslt_gemm.hpp"
#include "runtime/detail/op_binding.hpp"

namespace ktune::runtime::detail {

/// Whether `config` is a library algorithm this runtime can serve `key` with (gemm, layout nt or
/// nn without an epilogue, f16/bf16/f32).
bool library_config_serves(const PlanKey& key, const ktune::Config& config);

class LibraryGemmPlan {
 public:
  /// Checks the algorithm for the key's contiguous problem. Throws ktune::Error(kBadInput) with
  /// the reason when it cannot run here. `gemm` and `mutex` are the runtime's (one cuBLASLt handle,
  /// calls serialised on it) and must outlive the plan.
  LibraryGemmPlan(harness::CublasLtGemm& gemm, std::mutex& mutex, const PlanKey& key, const ktune::Config& config);

  /// Workspace bytes a call needs (for the contiguous problem).
  std::size_t workspace_bytes() const { return workspace_bytes_; }
  /// Whether the call's pointers (a, b, c) and row strides (lda, ldb, ldc, in elements) suit the
  /// algorithm (16-byte aligned); false: the default config serves the call.
  bool serves(std::span<const void* const> slots, std::span<const double> row_strides) const;
  /// The row-stride half of serves() (prepare() has no pointers yet).
  bool serves_strides(std::span<const double> row_strides) const;
  /// Enqueues the call on `stream` with workspace `workspace` of `workspace_size` bytes.
  void run(std::span<const void* const> slots, std::span<const double> row_strides, CUdeviceptr workspace,
           std::size_t workspace_size, CUstream stream) const;

 private:
  harness::CublasGemmProblem problem_for(std::span<const double> row_strides) const;

  harness::CublasLtGemm* gemm_;
  std::mutex* mutex_;
  harness::CublasGemmProblem problem_;
  harness::CublasLtAlgorithm algorithm_;
  std::size_t workspace_bytes_ = 0;
};

}  // namespace ktune::runtime::detail
