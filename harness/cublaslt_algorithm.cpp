#include "harness/cublaslt_algorithm.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "harness/cuda_check.hpp"
#include "ktune/error.hpp"

namespace ktune::harness {

namespace {

template <typename T>
T param(const Config& config, const char* name) {
  const int64_t v = config.at(name);
  if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
      v > static_cast<int64_t>(std::numeric_limits<T>::max())) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("cuBLASLt algorithm parameter {} = {} is out of range", name, v));
  }
  return static_cast<T>(v);
}

template <typename T>
T get(const CublasLtApi& api, const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t which) {
  T v{};
  std::size_t written = 0;
  check_cublas(api, api.cublasLtMatmulAlgoConfigGetAttribute(&algo, which, &v, sizeof v, &written),
               "cublasLtMatmulAlgoConfigGetAttribute", KTUNE_WHERE);
  return v;
}

template <typename T>
void set(const CublasLtApi& api, cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t which,
         T v) {
  check_cublas(api, api.cublasLtMatmulAlgoConfigSetAttribute(&algo, which, &v, sizeof v),
               "cublasLtMatmulAlgoConfigSetAttribute", KTUNE_WHERE);
}

}  // namespace

Config CublasLtAlgorithm::to_config() const {
  return Config(kVariant, {{"VERSION", version},
                           {"ALGO", id},
                           {"TILE", tile},
                           {"STAGES", stages},
                           {"SPLIT_K", split_k},
                           {"REDUCTION", reduction},
                           {"SWIZZLE", swizzle},
                           {"CUSTOM", custom},
                           {"INNER", inner},
                           {"CLUSTER", cluster}});
}

CublasLtAlgorithm CublasLtAlgorithm::from_config(const Config& config) {
  if (!is_cublaslt_config(config)) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("config of template '{}' is not a cuBLASLt algorithm", config.variant));
  }
  CublasLtAlgorithm a;
  a.version = config.at("VERSION");
  a.id = param<int32_t>(config, "ALGO");
  a.tile = param<uint32_t>(config, "TILE");
  a.stages = param<uint32_t>(config, "STAGES");
  a.split_k = param<int32_t>(config, "SPLIT_K");
  a.reduction = param<uint32_t>(config, "REDUCTION");
  a.swizzle = param<uint32_t>(config, "SWIZZLE");
  a.custom = param<uint32_t>(config, "CUSTOM");
  a.inner = param<uint16_t>(config, "INNER");
  a.cluster = param<uint16_t>(config, "CLUSTER");
  if (a.split_k < 1) throw Error(ErrorKind::kBadInput, "cuBLASLt algorithm SPLIT_K must be at least 1");
  return a;
}

std::string CublasLtAlgorithm::name_suffix() const {
  return fmt::format("v{}.a{}.t{}.s{}.k{}.r{}.w{}.c{}.i{}.x{}", version, id, tile, stages, split_k, reduction,
                     swizzle, custom, inner, cluster);
}

bool is_cublaslt_config(const Config& config) { return config.variant == CublasLtAlgorithm::kVariant; }

CublasLtAlgorithm read_algorithm(const CublasLtApi& api, const cublasLtMatmulAlgo_t& algo, int64_t version) {
  CublasLtAlgorithm a;
  a.version = version;
  a.id = get<int32_t>(api, algo, CUBLASLT_ALGO_CONFIG_ID);
  a.tile = get<uint32_t>(api, algo, CUBLASLT_ALGO_CONFIG_TILE_ID);
  a.stages = get<uint32_t>(api, algo, CUBLASLT_ALGO_CONFIG_STAGES_ID);
  // Algorithms that do not split K may report 0 here (seen for f32 with the bias epilogue on
  // cuBLASLt 13.1): that is no split, written 1 like every other unsplit algorithm.
  a.split_k = std::max(get<int32_t>(api, algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM), 1);
  a.reduction = get<uint32_t>(api, algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
  a.swizzle = get<uint32_t>(api, algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
  a.custom = get<uint32_t>(api, algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
  a.inner = get<uint16_t>(api, algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID);
  a.cluster = get<uint16_t>(api, algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  return a;
}

cublasLtMatmulAlgo_t restore_algorithm(const CublasLtApi& api, cublasLtHandle_t handle,
                                       cublasComputeType_t compute, cudaDataType_t scale_type,
                                       cudaDataType_t a_type, cudaDataType_t b_type, cudaDataType_t c_type,
                                       const CublasLtAlgorithm& a) {
  cublasLtMatmulAlgo_t algo{};
  check_cublas(
      api,
      api.cublasLtMatmulAlgoInit(handle, compute, scale_type, a_type, b_type, c_type, c_type, a.id, &algo),
      "cublasLtMatmulAlgoInit", KTUNE_WHERE);
  set(api, algo, CUBLASLT_ALGO_CONFIG_TILE_ID, a.tile);
  set(api, algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, a.stages);
  set(api, algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, a.split_k);
  set(api, algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, a.reduction);
  set(api, algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, a.swizzle);
  set(api, algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, a.custom);
  set(api, algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, a.inner);
  set(api, algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, a.cluster);
  return algo;
}

}  // namespace ktune::harness
