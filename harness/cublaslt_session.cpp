#include "harness/cublaslt_session.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <algorithm>
#include <cstdio>

#include "harness/cublaslt_algorithm.hpp"
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
  const std::vector<cublasLtMatmulHeuristicResult_t> best = heuristic(plan, 1);
  if (best.empty()) return false;
  plan.algo = best.front().algo;
  plan.workspace = best.front().workspaceSize;
  return true;
}

std::vector<cublasLtMatmulHeuristicResult_t> CublasLtSession::heuristic(const CublasLtMatmulPlan& plan,
                                                                         int count) const {
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
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(std::max(count, 1)));
  int found = 0;
  check_cublas(*api_,
               api_->cublasLtMatmulAlgoGetHeuristic(handle_, plan.desc, plan.a, plan.b, plan.c, plan.c, pref,
                                                    static_cast<int>(results.size()), results.data(), &found),
               "cublasLtMatmulAlgoGetHeuristic", KTUNE_WHERE);
  results.resize(static_cast<std::size_t>(std::max(found, 0)));
  return results;
}

int64_t CublasLtSession::version_number() const { return static_cast<int64_t>(api_->cublasLtGetVersion()); }

std::string CublasLtSession::version() const {
  return fmt::format("cuBLASLt {}", api_->cublasLtGetVersion());
}

std::string CublasLtSession::describe(const CublasLtMatmulPlan& plan) const {
  const CublasLtAlgorithm a = read_algorithm(*api_, plan.algo, version_number());
  return fmt::format("algo {} tile {} stages {} splitk {} workspace {}", a.id, a.tile, a.stages, a.split_k,
                     plan.workspace);
}

}  // namespace ktune::harness
