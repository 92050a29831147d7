#pragma once
/// What every cuBLASLt baseline shares: the library (cublas_api.hpp), a handle, the workspace, and a
/// matmul plan (descriptor, three layouts, the heuristic's best algorithm) with its clean-up. The
/// baselines (cublaslt_gemm.hpp, cublaslt_fp8_gemm.hpp) only describe their problems. Works on the
/// thread's current context; not thread-safe.

#include <cublasLt.h>
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/cublas_api.hpp"
#include "harness/cublaslt_algorithm.hpp"
#include "harness/device_buffer.hpp"

namespace ktune::harness {

/// Descriptors of one matmul and the algorithm chosen for them; destroys what it holds.
struct CublasLtMatmulPlan {
  const CublasLtApi* api = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr;  ///< cuBLAS's A (column-major)
  cublasLtMatrixLayout_t b = nullptr;  ///< cuBLAS's B
  cublasLtMatrixLayout_t c = nullptr;  ///< C and D
  cublasLtMatmulAlgo_t algo{};
  std::size_t workspace = 0;  ///< bytes the algorithm uses

  explicit CublasLtMatmulPlan(const CublasLtApi& a_api) : api(&a_api) {}
  CublasLtMatmulPlan(const CublasLtMatmulPlan&) = delete;
  CublasLtMatmulPlan& operator=(const CublasLtMatmulPlan&) = delete;
  ~CublasLtMatmulPlan();
};

class CublasLtSession {
 public:
  /// Workspace offered to cuBLASLt (NVIDIA's advice for Hopper: 32 MiB).
  static constexpr std::size_t kWorkspaceBytes = 32u << 20;

  /// Opens libcublasLt, creates the handle and the workspace in the current context. Throws
  /// Error(kNoDevice) naming the library when it cannot be opened, Error(kRuntime) with the cuBLAS
  /// status name otherwise.
  CublasLtSession();
  ~CublasLtSession();
  CublasLtSession(const CublasLtSession&) = delete;
  CublasLtSession& operator=(const CublasLtSession&) = delete;

  const CublasLtApi& api() const { return *api_; }
  cublasLtHandle_t handle() const { return handle_; }
  CUdeviceptr workspace() const { return workspace_.get(); }

  /// Asks the heuristic for `plan`'s best algorithm within kWorkspaceBytes and stores it in the plan;
  /// false when it offers none.
  bool choose_algorithm(CublasLtMatmulPlan& plan) const;
  /// The heuristic's best `count` algorithms for `plan` within kWorkspaceBytes, best first (fewer
  /// when it offers fewer).
  std::vector<cublasLtMatmulHeuristicResult_t> heuristic(const CublasLtMatmulPlan& plan, int count) const;
  /// `algo` with SPLITK_NUM = s for each s of `splits` the algorithm supports (its split-K
  /// capability; the reduction scheme the first it supports of output-type, compute-type and
  /// in-place), keeping those cublasLtMatmulAlgoCheck accepts for `plan` within kWorkspaceBytes.
  std::vector<cublasLtMatmulAlgo_t> split_k_variants(const CublasLtMatmulPlan& plan,
                                                     const cublasLtMatmulAlgo_t& algo,
                                                     const std::vector<int32_t>& splits) const;
  /// The heuristic's best `count` algorithms for `plan`, then the split-K variants (2 and 4) of its
  /// best two where the algorithm allows, as the library's candidates (harness/cublaslt_algorithm.hpp),
  /// without repeats.
  std::vector<CublasLtAlgorithm> candidates(const CublasLtMatmulPlan& plan, int count) const;
  /// A candidate algorithm restored for `plan` and checked: the algorithm and its workspace, or why
  /// it cannot run here (offered by another library version, refused by the library or by
  /// cublasLtMatmulAlgoCheck, more workspace than kWorkspaceBytes).
  struct Checked {
    cublasLtMatmulAlgo_t algo{};
    std::size_t workspace = 0;
    std::string rejection;  ///< "" when it runs
  };
  /// `a` for `plan`, whose A, B and C/D types and compute type are given (cublasLtMatmulAlgoInit's).
  Checked check(const CublasLtMatmulPlan& plan, const CublasLtAlgorithm& a, cublasComputeType_t compute,
                cudaDataType_t a_type, cudaDataType_t b_type, cudaDataType_t c_type) const;
  /// cublasLtGetVersion() of the opened library, e.g. 130100.
  int64_t version_number() const;

  /// "cuBLASLt 130100" style version text of the opened library.
  std::string version() const;
  /// The plan's algorithm for logs, e.g. "algo 66 tile 23 stages 19 splitk 1 workspace 0".
  std::string describe(const CublasLtMatmulPlan& plan) const;

 private:
  const CublasLtApi* api_;
  cublasLtHandle_t handle_ = nullptr;
  DeviceBuffer workspace_;
};

}  // namespace ktune::harness
