#include "harness/cublaslt_session.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>

#include "harness/cuda_check.hpp"

namespace ktune::harness {

CublasLtMatmulPlan::~CublasLtMatmulPlan() {
  if (a) api->cublasLtMatrixLayoutDestroy(a);
  if (b) api->cublasLtMatrixLayoutDestroy(b);
  if (c) api->cublasLtMatrixLayoutDestroy(c);
  if (desc) api->cublasLtMatmulDescDestroy(desc);
}

CublasLtSession::CublasLtSession() : api_(&require_cublaslt()), workspace_(kWorkspaceBytes) {
  check_cublas(*api_, api_->cublasLtCreate(&handle_), "cublasLtCreate", KTUNE_WHERE);
}

CublasLtSession::~CublasLtSession() {
  if (handle_ == nullptr) return;
  const cublasStatus_t s = api_->cublasLtDestroy(handle_);
  if (s != CUBLAS_STATUS_SUCCESS)
    std::fprintf(stderr, "ktune: cublasLtDestroy failed: %d\n", static_cast<int>(s));
}

bool CublasLtSession::choose_algorithm(CublasLtMatmulPlan& plan) const {
  cublasLtMatmulPreference_t pref = nullptr;
  check_cublas(*api_, api_->cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate",
               KTUNE_WHERE);
  struct PrefGuard {
    const CublasLtApi* api;
    cublasLtMatmulPreference_t pref;
    ~PrefGuard() { api->cublasLtMatmulPreferenceDestroy(pref); }
  } guard{api_, pref};
  const uint64_t max_ws = kWorkspaceBytes;
  check_cublas(*api_,
               api_->cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                          &max_ws, sizeof max_ws),
               "cublasLtMatmulPreferenceSetAttribute", KTUNE_WHERE);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  check_cublas(*api_,
               api_->cublasLtMatmulAlgoGetHeuristic(handle_, plan.desc, plan.a, plan.b, plan.c, plan.c, pref,
                                                    1, &result, &found),
               "cublasLtMatmulAlgoGetHeuristic", KTUNE_WHERE);
  if (found < 1) return false;
  plan.algo = result.algo;
  plan.workspace = result.workspaceSize;
  return true;
}

std::string CublasLtSession::version() const {
  return fmt::format("cuBLASLt {}", api_->cublasLtGetVersion());
}

std::string CublasLtSession::describe(const CublasLtMatmulPlan& plan) const {
  const auto attr = [&](cublasLtMatmulAlgoConfigAttributes_t which) {
    uint32_t v = 0;
    std::size_t written = 0;
    api_->cublasLtMatmulAlgoConfigGetAttribute(&plan.algo, which, &v, sizeof v, &written);
    return v;
  };
  return fmt::format("algo {} tile {} stages {} splitk {} workspace {}", attr(CUBLASLT_ALGO_CONFIG_ID),
                     attr(CUBLASLT_ALGO_CONFIG_TILE_ID), attr(CUBLASLT_ALGO_CONFIG_STAGES_ID),
                     attr(CUBLASLT_ALGO_CONFIG_SPLITK_NUM), plan.workspace);
}

}  // namespace ktune::harness
