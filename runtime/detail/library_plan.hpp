#pragma once
/// A gemm or fp8_gemm key whose tuned winner is a cuBLASLt algorithm (a library candidate of the
/// sweep, tuner/library/library_candidates.hpp) is served through the dlopen'd cuBLASLt with that
/// algorithm: restored and checked once when the plan is built (another library version, or an
/// algorithm the library refuses here, leaves the key to the default config), then one
/// cublasLtMatmul per call with the call's pointers (and gemm's row strides). Calls whose operand
/// pointers or row strides are not 16-byte aligned go to the default config instead (the library's
/// algorithms assume aligned operands).

#include <cuda.h>

#include <cstddef>
#include <mutex>
#include <span>

#include "core/config.hpp"
#include "harness/cublaslt_algorithm.hpp"
#include "harness/cublaslt_fp8_gemm.hpp"
#include "harness/cublaslt_gemm.hpp"
#include "runtime/detail/op_binding.hpp"

namespace ktune::runtime::detail {

/// Whether `config` is a library algorithm this runtime can serve `key` with: gemm (layout nt or
/// nn without an epilogue, f16/bf16/f32), fp8_gemm (per-tensor scales, N and K multiples of 16).
bool library_config_serves(const PlanKey& key, const ktune::Config& config);

/// The runtime's cuBLASLt objects: one handle each for gemm and fp8_gemm, opened on first use;
/// calls on them are serialised by `mutex`.
struct LibraryHandles {
  std::unique_ptr<harness::CublasLtGemm> gemm;
  std::unique_ptr<harness::CublasLtFp8Gemm> fp8;
  std::mutex mutex;
};

class LibraryGemmPlan {
 public:
  /// Checks the algorithm for the key's contiguous problem (opening the library when needed).
  /// Throws ktune::Error(kBadInput) with the reason when it cannot run here, kNoDevice when
  /// cuBLASLt cannot be opened. `handles` must outlive the plan.
  LibraryGemmPlan(LibraryHandles& handles, const PlanKey& key, const ktune::Config& config);

  /// Workspace bytes a call needs (for the contiguous problem).
  std::size_t workspace_bytes() const { return workspace_bytes_; }
  /// Whether the call's operand pointers (a, b, c) and gemm's row strides (lda, ldb, ldc, in
  /// elements) suit the algorithm (16-byte aligned); false: the default config serves the call.
  bool serves(std::span<const void* const> slots, std::span<const double> row_strides) const;
  /// The row-stride half of serves() (prepare() has no pointers yet); true for fp8_gemm.
  bool serves_strides(std::span<const double> row_strides) const;
  /// Enqueues the call on `stream` with workspace `workspace` of `workspace_size` bytes; `slots`
  /// in the binding's order (gemm: a, b, c, bias; fp8_gemm: a, b, a_scale, b_scale, c).
  void run(std::span<const void* const> slots, std::span<const double> row_strides, CUdeviceptr workspace,
           std::size_t workspace_size, CUstream stream) const;

 private:
  LibraryHandles* handles_;
  bool fp8_ = false;
  harness::CublasGemmProblem problem_;
  harness::CublasFp8Problem fp8_problem_;
  harness::CublasLtAlgorithm algorithm_;
  std::size_t workspace_bytes_ = 0;
};

}  // namespace ktune::runtime::detail
