#include "harness/cublaslt_gemm.hpp"

#include <cublasLt.h>
#include <fmt/format.h>

#include <cstdio>

#include "harness/cuda_check.hpp"
#include "harness/dynamic_library.hpp"

namespace ktune::harness {

/// The cuBLASLt entry points ktune uses, resolved from the opened library (plain C functions with
/// one ABI each, so cublasLt.h's prototypes type them).
#define KTUNE_CUBLASLT_FUNCS(X)             \
  X(cublasLtCreate)                         \
  X(cublasLtDestroy)                        \
  X(cublasLtGetVersion)                     \
  X(cublasLtGetStatusName)                  \
  X(cublasLtMatmulDescCreate)               \
  X(cublasLtMatmulDescDestroy)              \
  X(cublasLtMatmulDescSetAttribute)         \
  X(cublasLtMatrixLayoutCreate)             \
  X(cublasLtMatrixLayoutDestroy)            \
  X(cublasLtMatmulPreferenceCreate)         \
  X(cublasLtMatmulPreferenceDestroy)        \
  X(cublasLtMatmulPreferenceSetAttribute)   \
  X(cublasLtMatmulAlgoGetHeuristic)         \
  X(cublasLtMatmulAlgoConfigGetAttribute)   \
  X(cublasLtMatmul)

struct CublasLtGemm::Api {
  DynamicLibrary library;
#define KTUNE_DETAIL_CUBLASLT_MEMBER(name) decltype(&::name) name = nullptr;
  KTUNE_CUBLASLT_FUNCS(KTUNE_DETAIL_CUBLASLT_MEMBER)
#undef KTUNE_DETAIL_CUBLASLT_MEMBER

  Api() : library(DynamicLibrary::open(toolkit_library_candidates("cublasLt", "13"), "cuBLASLt, the cuBLAS baseline")) {
#define KTUNE_DETAIL_CUBLASLT_RESOLVE(name) name = reinterpret_cast<decltype(&::name)>(library.require(#name));
    KTUNE_CUBLASLT_FUNCS(KTUNE_DETAIL_CUBLASLT_RESOLVE)
#undef KTUNE_DETAIL_CUBLASLT_RESOLVE
  }

  void check(cublasStatus_t s, const char* call, const char* where) const {
    if (s != CUBLAS_STATUS_SUCCESS) {
      throw_api_error(ErrorKind::kRuntime, cublasLtGetStatusName(s), static_cast<long long>(s), "", call, where);
    }
  }
};

#define KTUNE_CUBLASLT_CHECK(call) api_->check(api_->call, #call, KTUNE_WHERE)

struct CublasLtGemm::Plan {
  const Api* api = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr;  // cuBLAS's A: ktune's B
  cublasLtMatrixLayout_t b = nullptr;  // cuBLAS's B: ktune's A
  cublasLtMatrixLayout_t c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  std::size_t workspace = 0;

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (a) api->cublasLtMatrixLayoutDestroy(a);
    if (b) api->cublasLtMatrixLayoutDestroy(b);
    if (c) api->cublasLtMatrixLayoutDestroy(c);
    if (desc) api->cublasLtMatmulDescDestroy(desc);
  }
};

CublasLtGemm::CublasLtGemm() : api_(std::make_unique<Api>()), workspace_(kWorkspaceBytes) {
  cublasLtHandle_t h = nullptr;
  KTUNE_CUBLASLT_CHECK(cublasLtCreate(&h));
  handle_ = h;
}

CublasLtGemm::~CublasLtGemm() {
  plans_.clear();
  if (handle_) {
    const cublasStatus_t s = api_->cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
    if (s != CUBLAS_STATUS_SUCCESS) std::fprintf(stderr, "ktune: cublasLtDestroy failed: %d\n", static_cast<int>(s));
  }
}

std::string CublasLtGemm::version() const { return fmt::format("cuBLASLt {}", api_->cublasLtGetVersion()); }

const CublasLtGemm::Plan& CublasLtGemm::plan(const CublasGemmProblem& p) {
  if (const auto it = plans_.find(p); it != plans_.end()) return *it->second;
  if (p.m < 1 || p.n < 1 || p.k < 1) {
    throw Error(ErrorKind::kBadInput, fmt::format("cuBLASLt gemm needs positive m, n, k (got {}, {}, {})", p.m, p.n, p.k));
  }
  cudaDataType_t type = CUDA_R_16BF;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (p.dtype) {
    case DType::kBF16: type = CUDA_R_16BF; break;
    case DType::kF16: type = CUDA_R_16F; break;
    case DType::kF32: type = CUDA_R_32F; break;
    default:
      throw Error(ErrorKind::kBadInput, fmt::format("cuBLASLt gemm baseline has no {} path", to_string(p.dtype)));
  }
  // cuBLAS is column-major: ktune's row-major C[M,N] is its C^T [N,M] = B^T A^T. ktune's A [M,K]
  // row-major is column-major K x M (cuBLAS's B, no transpose). "nt" B [N,K] row-major is column-major
  // K x N, transposed; "nn" B [K,N] row-major is column-major N x K, as is.
  auto plan = std::make_unique<Plan>();
  plan->api = api_.get();
  KTUNE_CUBLASLT_CHECK(cublasLtMatmulDescCreate(&plan->desc, compute, CUDA_R_32F));
  const cublasOperation_t trans_a = p.b_nt ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t trans_b = CUBLAS_OP_N;
  KTUNE_CUBLASLT_CHECK(
      cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a));
  KTUNE_CUBLASLT_CHECK(
      cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b));
  const auto u64 = [](int64_t v) { return static_cast<uint64_t>(v); };
  if (p.b_nt) {
    KTUNE_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&plan->a, type, u64(p.k), u64(p.n), p.k));
  } else {
    KTUNE_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&plan->a, type, u64(p.n), u64(p.k), p.n));
  }
  KTUNE_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&plan->b, type, u64(p.k), u64(p.m), p.k));
  KTUNE_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&plan->c, type, u64(p.n), u64(p.m), p.n));

  cublasLtMatmulPreference_t pref = nullptr;
  KTUNE_CUBLASLT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  struct PrefGuard {
    const Api* api;
    cublasLtMatmulPreference_t pref;
    ~PrefGuard() { api->cublasLtMatmulPreferenceDestroy(pref); }
  } guard{api_.get(), pref};
  const uint64_t max_ws = kWorkspaceBytes;
  KTUNE_CUBLASLT_CHECK(
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof max_ws));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  KTUNE_CUBLASLT_CHECK(cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(handle_), plan->desc, plan->a,
                                                      plan->b, plan->c, plan->c, pref, 1, &result, &found));
  if (found < 1) {
    throw Error(ErrorKind::kRuntime, fmt::format("cuBLASLt offers no algorithm for {} m={} n={} k={} {}",
                                                 to_string(p.dtype), p.m, p.n, p.k, p.b_nt ? "nt" : "nn"));
  }
  plan->algo = result.algo;
  plan->workspace = result.workspaceSize;
  return *plans_.emplace(p, std::move(plan)).first->second;
}

void CublasLtGemm::run(const CublasGemmProblem& problem, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
                       CUstream stream) {
  const Plan& p = plan(problem);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const auto ptr = [](CUdeviceptr d) { return reinterpret_cast<void*>(static_cast<uintptr_t>(d)); };
  KTUNE_CUBLASLT_CHECK(cublasLtMatmul(static_cast<cublasLtHandle_t>(handle_), p.desc, &alpha, ptr(b), p.a, ptr(a),
                                      p.b, &beta, ptr(c), p.c, ptr(c), p.c, &p.algo, ptr(workspace_.get()),
                                      p.workspace, reinterpret_cast<cudaStream_t>(stream)));
}

std::string CublasLtGemm::algorithm(const CublasGemmProblem& problem) const {
  const auto it = plans_.find(problem);
  if (it == plans_.end()) return {};
  const auto attr = [&](cublasLtMatmulAlgoConfigAttributes_t which) {
    uint32_t v = 0;
    std::size_t written = 0;
    api_->cublasLtMatmulAlgoConfigGetAttribute(&it->second->algo, which, &v, sizeof v, &written);
    return v;
  };
  return fmt::format("algo {} tile {} stages {} splitk {} workspace {}", attr(CUBLASLT_ALGO_CONFIG_ID),
                     attr(CUBLASLT_ALGO_CONFIG_TILE_ID), attr(CUBLASLT_ALGO_CONFIG_STAGES_ID),
                     attr(CUBLASLT_ALGO_CONFIG_SPLITK_NUM), it->second->workspace);
}

}  // namespace ktune::harness
