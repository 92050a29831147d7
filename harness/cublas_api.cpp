#include "harness/cublas_api.hpp"

#include <mutex>

#include <fmt/format.h>

#include "harness/cuda_check.hpp"
#include "harness/dynamic_library.hpp"
#include "ktune/error.hpp"

namespace ktune::harness {

namespace {
struct Loaded {
  DynamicLibrary lib;
  CublasLtApi api;
  std::string why;
  bool ok = false;
};

Loaded& loaded() {
  static Loaded l;
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      l.lib = DynamicLibrary::open(toolkit_library_candidates("cublasLt", "13"),
                                   "cuBLASLt, for GEMM ceilings and baselines");
#define KTUNE_DETAIL_LOAD(name) l.api.name = reinterpret_cast<decltype(l.api.name)>(l.lib.require(#name));
      KTUNE_DETAIL_LOAD(cublasLtCreate)
      KTUNE_DETAIL_LOAD(cublasLtDestroy)
      KTUNE_DETAIL_LOAD(cublasLtGetStatusName)
      KTUNE_DETAIL_LOAD(cublasLtGetVersion)
      KTUNE_DETAIL_LOAD(cublasLtMatmulDescCreate)
      KTUNE_DETAIL_LOAD(cublasLtMatmulDescDestroy)
      KTUNE_DETAIL_LOAD(cublasLtMatmulDescSetAttribute)
      KTUNE_DETAIL_LOAD(cublasLtMatrixLayoutCreate)
      KTUNE_DETAIL_LOAD(cublasLtMatrixLayoutDestroy)
      KTUNE_DETAIL_LOAD(cublasLtMatmulPreferenceCreate)
      KTUNE_DETAIL_LOAD(cublasLtMatmulPreferenceDestroy)
      KTUNE_DETAIL_LOAD(cublasLtMatmulPreferenceSetAttribute)
      KTUNE_DETAIL_LOAD(cublasLtMatmulAlgoGetHeuristic)
      KTUNE_DETAIL_LOAD(cublasLtMatmulAlgoConfigGetAttribute)
      KTUNE_DETAIL_LOAD(cublasLtMatmulAlgoInit)
      KTUNE_DETAIL_LOAD(cublasLtMatmulAlgoCheck)
      KTUNE_DETAIL_LOAD(cublasLtMatmulAlgoCapGetAttribute)
      KTUNE_DETAIL_LOAD(cublasLtMatmulAlgoConfigSetAttribute)
      KTUNE_DETAIL_LOAD(cublasLtMatmul)
#undef KTUNE_DETAIL_LOAD
      l.api.library = l.lib.name();
      l.ok = true;
    } catch (const Error& e) {
      l.why = e.what();
    }
  });
  return l;
}
}  // namespace

const CublasLtApi* cublaslt_or_null(std::string* why) {
  Loaded& l = loaded();
  if (!l.ok && why) *why = l.why;
  return l.ok ? &l.api : nullptr;
}

const CublasLtApi& require_cublaslt() {
  std::string why;
  const CublasLtApi* api = cublaslt_or_null(&why);
  if (api == nullptr) throw Error(ErrorKind::kNoDevice, why, "DLOPEN_FAILED");
  return *api;
}

void check_cublas(const CublasLtApi& api, cublasStatus_t status, const char* call, const char* where) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const char* name = api.cublasLtGetStatusName ? api.cublasLtGetStatusName(status) : nullptr;
  const std::string code = name ? name : fmt::format("cublasStatus_t {}", static_cast<int>(status));
  throw_api_error(ErrorKind::kRuntime, code, static_cast<long long>(status), "", call, where);
}

}  // namespace ktune::harness
