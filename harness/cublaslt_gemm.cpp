#include "harness/cublaslt_gemm.hpp"

#include <fmt/format.h>

#include "harness/cuda_check.hpp"

namespace ktune::harness {

#define KTUNE_CUBLASLT_CHECK(call) check_cublas(session_.api(), session_.api().call, #call, KTUNE_WHERE)

/// The matmul plan of one problem (no state beyond the shared plan's).
struct CublasLtGemm::Plan : CublasLtMatmulPlan {
  using CublasLtMatmulPlan::CublasLtMatmulPlan;
};

CublasLtGemm::CublasLtGemm() = default;
CublasLtGemm::~CublasLtGemm() = default;

std::string CublasLtGemm::version() const { return session_.version(); }

const CublasLtGemm::Plan& CublasLtGemm::plan(const CublasGemmProblem& p) {
  if (const auto it = plans_.find(p); it != plans_.end()) return *it->second;
  if (p.m < 1 || p.n < 1 || p.k < 1) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("cuBLASLt gemm needs positive m, n, k (got {}, {}, {})", p.m, p.n, p.k));
  }
  cudaDataType_t type = CUDA_R_16BF;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (p.dtype) {
    case DType::kBF16:
      type = CUDA_R_16BF;
      break;
    case DType::kF16:
      type = CUDA_R_16F;
      break;
    case DType::kF32:
      type = CUDA_R_32F;
      break;
    default:
      throw Error(ErrorKind::kBadInput,
                  fmt::format("cuBLASLt gemm baseline has no {} path", to_string(p.dtype)));
  }
  // cuBLAS is column-major: ktune's row-major C[M,N] is its C^T [N,M] = B^T A^T. ktune's A [M,K]
  // row-major is column-major K x M (cuBLAS's B, no transpose). "nt" B [N,K] row-major is column-major
  // K x N, transposed; "nn" B [K,N] row-major is column-major N x K, as is.
  auto plan = std::make_unique<Plan>(session_.api());
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
  if (!session_.choose_algorithm(*plan)) {
    throw Error(ErrorKind::kRuntime, fmt::format("cuBLASLt offers no algorithm for {} m={} n={} k={} {}",
                                                 to_string(p.dtype), p.m, p.n, p.k, p.b_nt ? "nt" : "nn"));
  }
  return *plans_.emplace(p, std::move(plan)).first->second;
}

void CublasLtGemm::run(const CublasGemmProblem& problem, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
                       CUstream stream) {
  const Plan& p = plan(problem);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const auto ptr = [](CUdeviceptr d) { return reinterpret_cast<void*>(static_cast<uintptr_t>(d)); };
  KTUNE_CUBLASLT_CHECK(cublasLtMatmul(session_.handle(), p.desc, &alpha, ptr(b), p.a, ptr(a), p.b, &beta,
                                      ptr(c), p.c, ptr(c), p.c, &p.algo, ptr(session_.workspace()),
                                      p.workspace, reinterpret_cast<cudaStream_t>(stream)));
}

std::string CublasLtGemm::algorithm(const CublasGemmProblem& problem) const {
  const auto it = plans_.find(problem);
  return it == plans_.end() ? std::string() : session_.describe(*it->second);
}

}  // namespace ktune::harness
