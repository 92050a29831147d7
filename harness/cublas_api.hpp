#pragma once
/// cuBLASLt, opened at run time from libcublasLt.so.13 (D2), for the GEMM ceilings of
/// `ktune devices --calibrate`, GEMM baselines and the library's algorithms as tuning candidates. Members are
/// named like the functions.

#include <cublasLt.h>

#include <string>

namespace ktune::harness {

struct CublasLtApi {
  decltype(&::cublasLtCreate) cublasLtCreate = nullptr;
  decltype(&::cublasLtDestroy) cublasLtDestroy = nullptr;
  decltype(&::cublasLtGetStatusName) cublasLtGetStatusName = nullptr;
  decltype(&::cublasLtGetVersion) cublasLtGetVersion = nullptr;
  decltype(&::cublasLtMatmulDescCreate) cublasLtMatmulDescCreate = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) cublasLtMatmulDescDestroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) cublasLtMatmulDescSetAttribute = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) cublasLtMatrixLayoutCreate = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) cublasLtMatrixLayoutDestroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) cublasLtMatmulPreferenceCreate = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) cublasLtMatmulPreferenceDestroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) cublasLtMatmulPreferenceSetAttribute = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) cublasLtMatmulAlgoGetHeuristic = nullptr;
  decltype(&::cublasLtMatmulAlgoConfigGetAttribute) cublasLtMatmulAlgoConfigGetAttribute = nullptr;
  decltype(&::cublasLtMatmulAlgoInit) cublasLtMatmulAlgoInit = nullptr;
  decltype(&::cublasLtMatmulAlgoCheck) cublasLtMatmulAlgoCheck = nullptr;
  decltype(&::cublasLtMatmulAlgoCapGetAttribute) cublasLtMatmulAlgoCapGetAttribute = nullptr;
  decltype(&::cublasLtMatmulAlgoConfigSetAttribute) cublasLtMatmulAlgoConfigSetAttribute = nullptr;
  decltype(&::cublasLtMatmul) cublasLtMatmul = nullptr;
  std::string library;
};

/// cuBLASLt loaded once (thread-safe), or nullptr with `*why` naming the library and dlopen's
/// reason. Never throws.
const CublasLtApi* cublaslt_or_null(std::string* why = nullptr);

/// cuBLASLt loaded once, or throws ktune::Error(kNoDevice) naming the library and dlopen's reason.
const CublasLtApi& require_cublaslt();

/// Throws ktune::Error(kRuntime, api_code = cublasLtGetStatusName(status)) unless status is success;
/// `where` is the caller's file:line (KTUNE_WHERE), "" when unknown.
void check_cublas(const CublasLtApi& api, cublasStatus_t status, const char* call, const char* where = "");

}  // namespace ktune::harness
