#pragma once
/// The cuBLAS baseline of the gemm family: C[M,N] = A[M,K] * B with cuBLASLt (opened at run time
/// from libcublasLt.so.13, D2), f32 accumulation, C in the input dtype, on the same row-major
/// tensors and layouts as ktune's templates ("nt": B is [N,K]; "nn": B is [K,N]), optionally with
/// cuBLASLt's bias epilogue (C += bias[n], the "+bias" forms). The first call of
/// a problem builds its plan (descriptors and the heuristic's best algorithm for a 32 MiB workspace)
/// and keeps it; later calls only launch. Works on the thread's current context; not thread-safe.

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/dtype.hpp"
#include "harness/cublaslt_algorithm.hpp"
#include "harness/cublaslt_layout.hpp"
#include "harness/cublaslt_session.hpp"

namespace ktune::harness {

/// One GEMM problem as cuBLASLt sees it.
struct CublasGemmProblem {
  DType dtype = DType::kBF16;  ///< f16, bf16 or f32 (f32 with f32 compute)
  bool b_nt = true;            ///< B as [N,K] ("nt") or [K,N] ("nn")
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  /// Row strides in elements (0: contiguous, the row's length): A [M,K] rows lda apart, B's rows
  /// ldb apart, C's rows ldc apart (strided views the dispatch runtime is handed).
  int64_t lda = 0;
  int64_t ldb = 0;
  int64_t ldc = 0;
  bool bias = false;  ///< C += bias[n] (CUBLASLT_EPILOGUE_BIAS; bias in the dtype, N values)

  auto key() const { return std::tie(dtype, b_nt, bias, m, n, k, lda, ldb, ldc); }
  bool operator<(const CublasGemmProblem& o) const { return key() < o.key(); }
};

class CublasLtGemm {
 public:
  /// Opens libcublasLt, creates the handle and the workspace in the current context. Throws
  /// Error(kNoDevice) naming the library when it cannot be opened, Error(kRuntime) with the
  /// cuBLAS status name otherwise.
  CublasLtGemm();
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  /// Enqueues C = A * B (+ bias when the problem has one) on `stream` (graph capture allowed once the
  /// plan exists: call once first). Throws Error(kBadInput) for a dtype cuBLASLt is not asked to do, a
  /// non-positive dimension or a missing bias, Error(kRuntime) when the heuristic offers no algorithm
  /// or the launch fails.
  void run(const CublasGemmProblem& problem, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, CUstream stream,
           CUdeviceptr bias = 0);

  /// The library's candidates for the problem (CublasLtSession::candidates: the heuristic's best
  /// `count`, best first, its first the one run() without an algorithm uses, then split-K variants
  /// of its best two). Throws like run().
  std::vector<CublasLtAlgorithm> algorithms(const CublasGemmProblem& problem, int count);
  /// "" when `algorithm` can run the problem here (same library version, accepted by
  /// cublasLtMatmulAlgoCheck, workspace within the session's); else why not.
  std::string rejection(const CublasGemmProblem& problem, const CublasLtAlgorithm& algorithm);
  /// Workspace bytes `algorithm` needs for the problem (0 when it cannot run: see rejection()).
  std::size_t workspace_bytes(const CublasGemmProblem& problem, const CublasLtAlgorithm& algorithm);
  /// Enqueues C = A * B with `algorithm` (a tuned candidate) instead of the heuristic's choice, on
  /// `workspace` (0: this object's own; else at least workspace_bytes()). Throws Error(kBadInput)
  /// with rejection()'s reason when it cannot run, or for too small a workspace.
  void run(const CublasGemmProblem& problem, const CublasLtAlgorithm& algorithm, CUdeviceptr a, CUdeviceptr b,
           CUdeviceptr c, CUstream stream, CUdeviceptr workspace = 0, std::size_t workspace_size = 0,
           CUdeviceptr bias = 0);

  /// "cuBLASLt 130100" style version text of the opened library.
  std::string version() const;
  /// cublasLtGetVersion() of the opened library.
  int64_t version_number() const { return session_.version_number(); }
  /// The chosen algorithm's id and tile, for logs, e.g. "algo 66 tile 23 stages 19 splitk 1"; "" if
  /// the problem has no plan yet.
  std::string algorithm(const CublasGemmProblem& problem) const;

 private:
  struct Plan;
  using Chosen = CublasLtSession::Checked;
  const Plan& plan(const CublasGemmProblem& problem);
  const Chosen& chosen(const CublasGemmProblem& problem, const CublasLtAlgorithm& algorithm);
  void enqueue(const Plan& p, const cublasLtMatmulAlgo_t& algo, CUdeviceptr workspace,
               std::size_t workspace_size, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, CUdeviceptr bias,
               CUstream stream);

  CublasLtSession session_;
  std::map<CublasGemmProblem, std::unique_ptr<Plan>> plans_;
  std::map<std::pair<CublasGemmProblem, CublasLtAlgorithm>, Chosen>
      chosen_;  ///< by problem and algorithm (no text on the call path)
};

}  // namespace ktune::harness
