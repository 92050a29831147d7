#include "harness/cublaslt_fp8_gemm.hpp"

#include <cublasLt.h>
#include <fmt/format.h>

#include <cstdio>

#include "harness/cuda_check.hpp"
#include "harness/dynamic_library.hpp"

namespace ktune::harness {

/// The cuBLASLt entry points the fp8 baseline uses (plain C functions with one ABI each, so
/// cublasLt.h's prototypes type them).
#define KTUNE_CUBLASLT_FP8_FUNCS(X)       \
  X(cublasLtCreate)                       \
  X(cublasLtDestroy)                      \
  X(cublasLtGetVersion)                   \
  X(cublasLtGetStatusName)                \
  X(cublasLtMatmulDescCreate)             \
  X(cublasLtMatmulDescDestroy)            \
  X(cublasLtMatmulDescSetAttribute)       \
  X(cublasLtMatrixLayoutCreate)           \
  X(cublasLtMatrixLayoutDestroy)          \
  X(cublasLtMatmulPreferenceCreate)       \
  X(cublasLtMatmulPreferenceDestroy)      \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatmulAlgoGetHeuristic)       \
  X(cublasLtMatmulAlgoConfigGetAttribute) \
  X(cublasLtMatmul)

struct CublasLtFp8Gemm::Api {
  DynamicLibrary library;
#define KTUNE_DETAIL_FP8_MEMBER(name) decltype(&::name) name = nullptr;
  KTUNE_CUBLASLT_FP8_FUNCS(KTUNE_DETAIL_FP8_MEMBER)
#undef KTUNE_DETAIL_FP8_MEMBER

  Api()
      : library(DynamicLibrary::open(toolkit_library_candidates("cublasLt", "13"),
                                     "cuBLASLt, the fp8 GEMM baseline")) {
#define KTUNE_DETAIL_FP8_RESOLVE(name) name = reinterpret_cast<decltype(&::name)>(library.require(#name));
    KTUNE_CUBLASLT_FP8_FUNCS(KTUNE_DETAIL_FP8_RESOLVE)
#undef KTUNE_DETAIL_FP8_RESOLVE
  }

  void check(cublasStatus_t s, const char* call, const char* where) const {
    if (s != CUBLAS_STATUS_SUCCESS) {
      throw_api_error(ErrorKind::kRuntime, cublasLtGetStatusName(s), static_cast<long long>(s), "", call,
                      where);
    }
  }
};

#define KTUNE_CUBLASLT_FP8_CHECK(call) api_->check(api_->call, #call, KTUNE_WHERE)

struct CublasLtFp8Gemm::Plan {
  const Api* api = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr;  // cuBLAS's A: ktune's B [N,K], transposed
  cublasLtMatrixLayout_t b = nullptr;  // cuBLAS's B: ktune's A [M,K]
  cublasLtMatrixLayout_t c = nullptr;  // bf16 [M,N] row-major = column-major N x M
  cublasLtMatmulAlgo_t algo{};
  std::size_t workspace = 0;
  // The scale pointers are descriptor attributes: the last ones set, to skip resetting them.
  CUdeviceptr a_scale = 0;
  CUdeviceptr b_scale = 0;

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

CublasLtFp8Gemm::CublasLtFp8Gemm() : api_(std::make_unique<Api>()), workspace_(kWorkspaceBytes) {
  cublasLtHandle_t h = nullptr;
  KTUNE_CUBLASLT_FP8_CHECK(cublasLtCreate(&h));
  handle_ = h;
}

CublasLtFp8Gemm::~CublasLtFp8Gemm() {
  plans_.clear();
  if (handle_) {
    const cublasStatus_t s = api_->cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
    if (s != CUBLAS_STATUS_SUCCESS)
      std::fprintf(stderr, "ktune: cublasLtDestroy failed: %d\n", static_cast<int>(s));
  }
}

std::string CublasLtFp8Gemm::version() const {
  return fmt::format("cuBLASLt {}", api_->cublasLtGetVersion());
}

CublasLtFp8Gemm::Plan& CublasLtFp8Gemm::plan(const CublasFp8Problem& p) {
  if (const auto it = plans_.find(p); it != plans_.end()) return *it->second;
  if (p.m < 1 || p.n < 1 || p.k < 1) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("cuBLASLt fp8 gemm needs positive m, n, k (got {}, {}, {})", p.m, p.n, p.k));
  }
  // cuBLASLt's fp8 rule: leading dimensions (K for A and B, N for C) multiples of 16.
  constexpr int64_t kLd = 16;
  if (p.k % kLd != 0 || p.n % kLd != 0) {
    throw Error(
        ErrorKind::kBadInput,
        fmt::format("cuBLASLt fp8 gemm needs K and N multiples of {} (got n={}, k={})", kLd, p.n, p.k));
  }
  auto plan = std::make_unique<Plan>();
  plan->api = api_.get();
  KTUNE_CUBLASLT_FP8_CHECK(cublasLtMatmulDescCreate(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t trans_a = CUBLAS_OP_T;
  const cublasOperation_t trans_b = CUBLAS_OP_N;
  const int8_t fast = p.fast_accum ? 1 : 0;
  KTUNE_CUBLASLT_FP8_CHECK(
      cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a));
  KTUNE_CUBLASLT_FP8_CHECK(
      cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b));
  KTUNE_CUBLASLT_FP8_CHECK(
      cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
  const auto u64 = [](int64_t v) { return static_cast<uint64_t>(v); };
  KTUNE_CUBLASLT_FP8_CHECK(cublasLtMatrixLayoutCreate(&plan->a, CUDA_R_8F_E4M3, u64(p.k), u64(p.n), p.k));
  KTUNE_CUBLASLT_FP8_CHECK(cublasLtMatrixLayoutCreate(&plan->b, CUDA_R_8F_E4M3, u64(p.k), u64(p.m), p.k));
  KTUNE_CUBLASLT_FP8_CHECK(cublasLtMatrixLayoutCreate(&plan->c, CUDA_R_16BF, u64(p.n), u64(p.m), p.n));

  cublasLtMatmulPreference_t pref = nullptr;
  KTUNE_CUBLASLT_FP8_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  struct PrefGuard {
    const Api* api;
    cublasLtMatmulPreference_t pref;
    ~PrefGuard() { api->cublasLtMatmulPreferenceDestroy(pref); }
  } guard{api_.get(), pref};
  const uint64_t max_ws = kWorkspaceBytes;
  KTUNE_CUBLASLT_FP8_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof max_ws));
  // The heuristic must see scale pointers set (any non-null value) to pick an algorithm that honours
  // them; the real ones are set before each launch.
  const void* placeholder = reinterpret_cast<const void*>(static_cast<uintptr_t>(workspace_.get()));
  KTUNE_CUBLASLT_FP8_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                                          &placeholder, sizeof placeholder));
  KTUNE_CUBLASLT_FP8_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                                          &placeholder, sizeof placeholder));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  KTUNE_CUBLASLT_FP8_CHECK(cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(handle_), plan->desc,
                                                          plan->a, plan->b, plan->c, plan->c, pref, 1,
                                                          &result, &found));
  if (found < 1) {
    throw Error(ErrorKind::kRuntime,
                fmt::format("cuBLASLt offers no fp8 algorithm for m={} n={} k={}", p.m, p.n, p.k));
  }
  plan->algo = result.algo;
  plan->workspace = result.workspaceSize;
  return *plans_.emplace(p, std::move(plan)).first->second;
}

void CublasLtFp8Gemm::run(const CublasFp8Problem& problem, CUdeviceptr a, CUdeviceptr b, CUdeviceptr a_scale,
                          CUdeviceptr b_scale, CUdeviceptr c, CUstream stream) {
  Plan& p = plan(problem);
  const auto ptr = [](CUdeviceptr d) { return reinterpret_cast<void*>(static_cast<uintptr_t>(d)); };
  // cuBLAS's A is ktune's B, so its A scale is b_scale.
  if (p.a_scale != b_scale) {
    const void* v = ptr(b_scale);
    KTUNE_CUBLASLT_FP8_CHECK(
        cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &v, sizeof v));
    p.a_scale = b_scale;
  }
  if (p.b_scale != a_scale) {
    const void* v = ptr(a_scale);
    KTUNE_CUBLASLT_FP8_CHECK(
        cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &v, sizeof v));
    p.b_scale = a_scale;
  }
  const float alpha = 1.0f;
  const float beta = 0.0f;
  KTUNE_CUBLASLT_FP8_CHECK(cublasLtMatmul(
      static_cast<cublasLtHandle_t>(handle_), p.desc, &alpha, ptr(b), p.a, ptr(a), p.b, &beta, ptr(c), p.c,
      ptr(c), p.c, &p.algo, ptr(workspace_.get()), p.workspace, reinterpret_cast<cudaStream_t>(stream)));
}

std::string CublasLtFp8Gemm::algorithm(const CublasFp8Problem& problem) const {
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
