#pragma once
/// A vendor-library call as a candidate's launch (D3): instead of a compiled kernel, a LaunchSpec
/// may carry a cuBLASLt matmul with one named algorithm. It is verified, timed (graph batches,
/// rotated inputs) and counted like a kernel of ktune's own, by the same code; only loading it
/// differs (measure/library_launch.hpp). This part is data only (no CUDA): the call's description
/// and its JSON form, which travels to the worker in LaunchSpec::library.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/config.hpp"
#include "core/dtype.hpp"
#include "harness/cublaslt_layout.hpp"
#include "measure/candidate.hpp"

namespace ktune::measure {

/// C[M,N] = A[M,K] * B (row-major; "nt": B is [N,K], "nn": B is [K,N]) by cuBLASLt with `algorithm`
/// (a config of variant "cublaslt": harness/cublaslt_algorithm.hpp), on the request's buffers
/// named `a`, `b`, `c`; the "+bias" layouts ("nt+bias", "nn+bias") add buffer `bias` (N values)
/// through cuBLASLt's bias epilogue. With `fp8`: A and B in e4m3 ("nt" only), C in bf16, times the per-tensor
/// scales in buffers `a_scale` and `b_scale` (fp8_gemm's problem).
struct LibraryGemmCall {
  bool fp8 = false;
  DType dtype = DType::kBF16;  ///< the inputs' dtype (kFP8E4M3 with fp8)
  std::string layout = "nt";
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  std::string a = "a";
  std::string b = "b";
  std::string c = "c";
  std::string bias = "bias";        ///< the "+bias" layouts only
  std::string a_scale = "a_scale";  ///< fp8 only
  std::string b_scale = "b_scale";  ///< fp8 only
  Config algorithm;
};

/// {"call":"cublaslt_gemm" or "cublaslt_fp8_gemm","dtype":..,"layout":..,"m":..,"n":..,"k":..,
///  "a":..,"b":..,"c":.., "+bias" layouts: "bias":.., fp8: "a_scale":..,"b_scale":.., "algorithm":
///  the config's JSON text (its parameters keep their order)}.
nlohmann::json to_json(const LibraryGemmCall& call);
/// Inverse; throws ktune::Error(kBadInput) naming the missing or bad field.
LibraryGemmCall library_gemm_call_from_json(const nlohmann::json& j);

/// The call as a launch of a candidate's sequence: no cubin, `function` a readable label, the call
/// in `library`.
LaunchSpec library_launch(const LibraryGemmCall& call);

}  // namespace ktune::measure
