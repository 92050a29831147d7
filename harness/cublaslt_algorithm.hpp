#pragma once
/// One cuBLASLt matmul algorithm as data (D3's vendor-library candidates): the algorithm id and
/// the configuration attributes that pick its variant (tile, stages, split-K and its reduction,
/// swizzle, custom option, inner and cluster shape), plus the version of the library that offered
/// it. Read from a heuristic result, written as a config's integer parameters (the cache stores it
/// like a template's config), and restored into a cublasLtMatmulAlgo_t with cublasLtMatmulAlgoInit
/// and the attribute setters. An algorithm is only meaningful to the library version that offered
/// it: a config of another version is stale, as a changed template is.

#include <cublasLt.h>

#include <compare>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/config.hpp"
#include "harness/cublas_api.hpp"

namespace ktune::harness {

struct CublasLtAlgorithm {
  /// The config variant (template name) of a cuBLASLt algorithm.
  static constexpr const char* kVariant = "cublaslt";

  int64_t version = 0;  ///< cublasLtGetVersion() of the library that offered it, e.g. 130100
  int32_t id = 0;
  uint32_t tile = 0;
  uint32_t stages = 0;
  int32_t split_k = 1;
  uint32_t reduction = 0;
  uint32_t swizzle = 0;
  uint32_t custom = 0;
  uint16_t inner = 0;
  uint16_t cluster = 0;

  /// The config: variant kVariant, parameters VERSION, ALGO, TILE, STAGES, SPLIT_K, REDUCTION,
  /// SWIZZLE, CUSTOM, INNER, CLUSTER in that order.
  Config to_config() const;
  /// Inverse of to_config(); throws ktune::Error(kBadInput) naming a missing or out-of-range
  /// parameter, or a config of another variant.
  static CublasLtAlgorithm from_config(const Config& config);
  /// "v130100.a66.t23.s19.k1.r0.w0.c0.i0.x0": the part of a canonical name after "cublaslt.".
  std::string name_suffix() const;

  bool operator==(const CublasLtAlgorithm&) const = default;
  auto operator<=>(const CublasLtAlgorithm&) const = default;
};

/// Whether `config` names a cuBLASLt algorithm (its variant is CublasLtAlgorithm::kVariant).
bool is_cublaslt_config(const Config& config);

/// The algorithm of `algo` (its attributes read back), offered by library `version`.
CublasLtAlgorithm read_algorithm(const CublasLtApi& api, const cublasLtMatmulAlgo_t& algo, int64_t version);

/// The cublasLtMatmulAlgo_t of `a` for a matmul of these types (cublasLtMatmulAlgoInit, then every
/// attribute set). Throws Error(kRuntime) with the cuBLAS status when the library refuses the id or
/// an attribute (cublasLtMatmulAlgoCheck against the descriptors is the caller's next step).
cublasLtMatmulAlgo_t restore_algorithm(const CublasLtApi& api, cublasLtHandle_t handle,
                                       cublasComputeType_t compute, cudaDataType_t scale_type,
                                       cudaDataType_t a_type, cudaDataType_t b_type, cudaDataType_t c_type,
                                       const CublasLtAlgorithm& a);

}  // namespace ktune::harness
