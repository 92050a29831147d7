#pragma once
/// The cuBLASLt baseline of fp8_gemm: C[M,N] (bf16) = (a_scale * b_scale) * A[M,K] * B[N,K]^T with
/// A and B in e4m3, f32 compute, per-tensor scales read from device memory
/// (CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER), on the same row-major tensors as ktune's template. In
/// cuBLAS's column-major terms this is the "TN" layout fp8 requires: D^T [N,M] = op_T(B) * A^T.
/// cuBLASLt opened at run time from libcublasLt.so.13 (D2). The first call of a problem builds its
/// plan (descriptors, the heuristic's best algorithm for a 32 MiB workspace) and keeps it; later
/// calls only launch. Works on the thread's current context; not thread-safe. fp8 needs sm_89+.

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "harness/cublaslt_algorithm.hpp"
#include "harness/cublaslt_session.hpp"

namespace ktune::harness {

/// One fp8 GEMM problem as cuBLASLt sees it.
struct CublasFp8Problem {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  /// CUBLASLT_MATMUL_DESC_FAST_ACCUM: cuBLASLt's faster fp8 accumulation (off: full f32, as ktune's).
  bool fast_accum = false;

  auto key() const { return std::tie(m, n, k, fast_accum); }
  bool operator<(const CublasFp8Problem& o) const { return key() < o.key(); }
};

class CublasLtFp8Gemm {
 public:
  /// Opens libcublasLt, creates the handle and the workspace in the current context. Throws
  /// Error(kNoDevice) naming the library when it cannot be opened, Error(kRuntime) with the cuBLAS
  /// status name otherwise.
  CublasLtFp8Gemm();
  ~CublasLtFp8Gemm();
  CublasLtFp8Gemm(const CublasLtFp8Gemm&) = delete;
  CublasLtFp8Gemm& operator=(const CublasLtFp8Gemm&) = delete;

  /// Enqueues C = a_scale[0] * b_scale[0] * A * B^T on `stream` (graph capture allowed once the plan
  /// exists: call once first). a, b: e4m3, 16-byte aligned; a_scale, b_scale: one f32 each; c:
  /// bf16. Throws Error(kBadInput) for a non-positive dimension or K, N not multiples of 16
  /// (cuBLASLt's fp8 rule), Error(kRuntime) when the heuristic offers no algorithm or the launch
  /// fails.
  void run(const CublasFp8Problem& problem, CUdeviceptr a, CUdeviceptr b, CUdeviceptr a_scale,
           CUdeviceptr b_scale, CUdeviceptr c, CUstream stream);

  /// The library's candidates for the problem (CublasLtSession::candidates). Throws like run().
  std::vector<CublasLtAlgorithm> algorithms(const CublasFp8Problem& problem, int count);
  /// "" when `algorithm` can run the problem here (same library version, accepted by
  /// cublasLtMatmulAlgoCheck, workspace within the session's); else why not.
  std::string rejection(const CublasFp8Problem& problem, const CublasLtAlgorithm& algorithm);
  /// Workspace bytes `algorithm` needs for the problem (0 when it cannot run).
  std::size_t workspace_bytes(const CublasFp8Problem& problem, const CublasLtAlgorithm& algorithm);
  /// Enqueues the product with `algorithm` (a tuned candidate) on `workspace` (0: this object's
  /// own; else at least workspace_bytes()). Throws Error(kBadInput) with rejection()'s reason.
  void run(const CublasFp8Problem& problem, const CublasLtAlgorithm& algorithm, CUdeviceptr a, CUdeviceptr b,
           CUdeviceptr a_scale, CUdeviceptr b_scale, CUdeviceptr c, CUstream stream,
           CUdeviceptr workspace = 0, std::size_t workspace_size = 0);

  /// "cuBLASLt 130100" style version text of the opened library.
  std::string version() const;
  /// The chosen algorithm's id and tile, for logs; "" if the problem has no plan yet.
  std::string algorithm(const CublasFp8Problem& problem) const;

 private:
  struct Plan;
  using Chosen = CublasLtSession::Checked;
  Plan& plan(const CublasFp8Problem& problem);
  const Chosen& chosen(const CublasFp8Problem& problem, const CublasLtAlgorithm& algorithm);
  void enqueue(Plan& p, const cublasLtMatmulAlgo_t& algo, CUdeviceptr workspace, std::size_t workspace_size,
               CUdeviceptr a, CUdeviceptr b, CUdeviceptr a_scale, CUdeviceptr b_scale, CUdeviceptr c,
               CUstream stream);

  CublasLtSession session_;
  std::map<CublasFp8Problem, std::unique_ptr<Plan>> plans_;
  std::map<std::pair<CublasFp8Problem, CublasLtAlgorithm>, Chosen>
      chosen_;  ///< by problem and algorithm (no text on the call path)
};

}  // namespace ktune::harness
