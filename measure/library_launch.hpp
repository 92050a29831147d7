#pragma once
/// A library call of a candidate (measure/library_call.hpp) on the device: the cuBLASLt handle and
/// workspace, the algorithm restored and checked against the problem, and the buffers' addresses
/// per buffer set, ready to enqueue like a loaded kernel (graph capture included: the plan and the
/// algorithm are built here, before any run).

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/cublaslt_algorithm.hpp"
#include "harness/cublaslt_fp8_gemm.hpp"
#include "harness/cublaslt_gemm.hpp"
#include "measure/candidate_launch.hpp"
#include "measure/library_call.hpp"

namespace ktune::measure {

class LoadedLibraryCall {
 public:
  /// Opens cuBLASLt in the current context and checks the call's algorithm. Throws
  /// ktune::Error(kBadInput) for a malformed call, kNoDevice when cuBLASLt cannot be opened.
  explicit LoadedLibraryCall(const LaunchSpec& spec);

  /// "" when the algorithm runs here; else why not (another library version, refused by
  /// cublasLtMatmulAlgoCheck, too much workspace): the candidate then exceeds the limits.
  const std::string& limit_violation() const { return violation_; }
  /// {"library": "cuBLASLt 130100", "algorithm": "v130100.a66...", "workspace_bytes": ...}.
  nlohmann::json resources() const { return resources_; }
  const std::string& function_name() const { return function_; }

  /// Resolves the buffers' addresses once per buffer set.
  void bind(const std::vector<const BufferSet*>& sets);
  /// Enqueues the call on `stream` with the buffers of set `set`.
  void launch(std::size_t set, CUstream stream);

 private:
  struct Bound {
    CUdeviceptr a = 0;
    CUdeviceptr b = 0;
    CUdeviceptr c = 0;
    CUdeviceptr a_scale = 0;
    CUdeviceptr b_scale = 0;
    CUdeviceptr bias = 0;
  };
  LibraryGemmCall call_;
  harness::CublasGemmProblem problem_;
  harness::CublasFp8Problem fp8_problem_;
  harness::CublasLtAlgorithm algorithm_;
  std::unique_ptr<harness::CublasLtGemm> gemm_;         ///< bf16/f16/f32 calls
  std::unique_ptr<harness::CublasLtFp8Gemm> fp8_gemm_;  ///< fp8 calls
  std::string function_;
  std::string violation_;
  nlohmann::json resources_ = nlohmann::json::object();
  std::vector<Bound> bound_;
};

}  // namespace ktune::measure
