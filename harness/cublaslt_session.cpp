#include "harness/cublaslt_session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
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

std::vector<cublasLtMatmulAlgo_t> CublasLtSession::split_k_variants(
    const CublasLtMatmulPlan& plan, const cublasLtMatmulAlgo_t& algo,
    const std::vector<int32_t>& splits) const {
  std::vector<cublasLtMatmulAlgo_t> out;
  int32_t supported = 0;
  std::size_t written = 0;
  if (api_->cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &supported,
                                              sizeof supported, &written) != CUBLAS_STATUS_SUCCESS ||
      supported == 0)
    return out;
  uint32_t mask = 0;
  if (api_->cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK, &mask,
                                              sizeof mask, &written) != CUBLAS_STATUS_SUCCESS)
    return out;
  uint32_t scheme = 0;
  for (const uint32_t s :
       {uint32_t{CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE}, uint32_t{CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE},
        uint32_t{CUBLASLT_REDUCTION_SCHEME_INPLACE}}) {
    if ((mask & s) != 0) {
      scheme = s;
      break;
    }
  }
  if (scheme == 0) return out;
  for (const int32_t split : splits) {
    cublasLtMatmulAlgo_t v = algo;
    if (api_->cublasLtMatmulAlgoConfigSetAttribute(&v, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split,
                                                   sizeof split) != CUBLAS_STATUS_SUCCESS ||
        api_->cublasLtMatmulAlgoConfigSetAttribute(&v, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme,
                                                   sizeof scheme) != CUBLAS_STATUS_SUCCESS)
      continue;
    cublasLtMatmulHeuristicResult_t result{};
    if (api_->cublasLtMatmulAlgoCheck(handle_, plan.desc, plan.a, plan.b, plan.c, plan.c, &v, &result) !=
            CUBLAS_STATUS_SUCCESS ||
        result.workspaceSize > kWorkspaceBytes)
      continue;
    out.push_back(v);
  }
  return out;
}

std::vector<CublasLtAlgorithm> CublasLtSession::candidates(const CublasLtMatmulPlan& plan, int count) const {
  constexpr std::size_t kVaried = 2;  // the heuristic's best two get split-K variants
  const std::vector<int32_t> kSplits = {2, 4};
  std::vector<CublasLtAlgorithm> out;
  const auto add = [&](const cublasLtMatmulAlgo_t& algo) {
    const CublasLtAlgorithm a = read_algorithm(*api_, algo, version_number());
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  };
  const std::vector<cublasLtMatmulHeuristicResult_t> best = heuristic(plan, count);
  for (const auto& r : best) add(r.algo);
  for (std::size_t i = 0; i < best.size() && i < kVaried; ++i) {
    if (read_algorithm(*api_, best[i].algo, version_number()).split_k != 1) continue;
    for (const cublasLtMatmulAlgo_t& v : split_k_variants(plan, best[i].algo, kSplits)) add(v);
  }
  return out;
}

CublasLtSession::Checked CublasLtSession::check(const CublasLtMatmulPlan& plan, const CublasLtAlgorithm& a,
                                                cublasComputeType_t compute, cudaDataType_t a_type,
                                                cudaDataType_t b_type, cudaDataType_t c_type) const {
  Checked c;
  if (a.version != version_number()) {
    c.rejection = fmt::format("the algorithm was offered by cuBLASLt {}, this is cuBLASLt {}", a.version,
                              version_number());
    return c;
  }
  try {
    c.algo = restore_algorithm(*api_, handle_, compute, CUDA_R_32F, a_type, b_type, c_type, a);
  } catch (const Error& e) {
    c.rejection = fmt::format("cuBLASLt refuses algorithm {}: {}", a.name_suffix(), e.what());
    return c;
  }
  cublasLtMatmulHeuristicResult_t result{};
  const cublasStatus_t status =
      api_->cublasLtMatmulAlgoCheck(handle_, plan.desc, plan.a, plan.b, plan.c, plan.c, &c.algo, &result);
  if (status != CUBLAS_STATUS_SUCCESS) {
    c.rejection = fmt::format("cublasLtMatmulAlgoCheck refuses algorithm {}: {}", a.name_suffix(),
                              api_->cublasLtGetStatusName(status));
  } else if (result.workspaceSize > kWorkspaceBytes) {
    c.rejection = fmt::format("algorithm {} needs {} bytes of workspace, more than the {} offered",
                              a.name_suffix(), result.workspaceSize, kWorkspaceBytes);
  } else {
    c.workspace = result.workspaceSize;
  }
  return c;
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
