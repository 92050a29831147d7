#include "harness/cublaslt_gemm.hpp"

#include <fmt/format.h>

#include "harness/cuda_check.hpp"

namespace ktune::harness {

#define KTUNE_CUBLASLT_CHECK(call) check_cublas(session_.api(), session_.api().call, #call, KTUNE_WHERE)

/// The matmul plan of one problem (no state beyond the shared plan's).
struct CublasLtGemm::Plan : CublasLtMatmulPlan {
  using CublasLtMatmulPlan::CublasLtMatmulPlan;
  cudaDataType_t type = CUDA_R_16BF;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  bool bias = false;
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
  const auto ld = [](int64_t given, int64_t row) { return given > 0 ? given : row; };
  if (p.b_nt) {
    KTUNE_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&plan->a, type, u64(p.k), u64(p.n), ld(p.ldb, p.k)));
  } else {
    KTUNE_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&plan->a, type, u64(p.n), u64(p.k), ld(p.ldb, p.n)));
  }
  KTUNE_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&plan->b, type, u64(p.k), u64(p.m), ld(p.lda, p.k)));
  KTUNE_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&plan->c, type, u64(p.n), u64(p.m), ld(p.ldc, p.n)));
  if (p.bias) {
    // cuBLAS's D is column-major N x M: its bias has one value per row, ktune's per column n. The
    // heuristic and the algorithm check see the epilogue (it is part of the descriptor).
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    KTUNE_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                                        sizeof epilogue));
    KTUNE_CUBLASLT_CHECK(
        cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof type));
  }
  plan->type = type;
  plan->compute = compute;
  plan->bias = p.bias;
  if (!session_.choose_algorithm(*plan)) {
    throw Error(ErrorKind::kRuntime,
                fmt::format("cuBLASLt offers no algorithm for {} m={} n={} k={} {}", to_string(p.dtype), p.m,
                            p.n, p.k, std::string(p.b_nt ? "nt" : "nn") + (p.bias ? "+bias" : "")));
  }
  return *plans_.emplace(p, std::move(plan)).first->second;
}

void CublasLtGemm::enqueue(const Plan& p, const cublasLtMatmulAlgo_t& algo, CUdeviceptr workspace,
                           std::size_t workspace_size, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
                           CUdeviceptr bias, CUstream stream) {
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const auto ptr = [](CUdeviceptr d) { return reinterpret_cast<void*>(static_cast<uintptr_t>(d)); };
  if (p.bias) {
    if (bias == 0) throw Error(ErrorKind::kBadInput, "cuBLASLt gemm with a bias epilogue needs the bias");
    const void* bias_ptr = ptr(bias);  // read when the matmul is enqueued (or captured)
    KTUNE_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr,
                                                        sizeof bias_ptr));
  }
  KTUNE_CUBLASLT_CHECK(cublasLtMatmul(session_.handle(), p.desc, &alpha, ptr(b), p.a, ptr(a), p.b, &beta,
                                      ptr(c), p.c, ptr(c), p.c, &algo, ptr(workspace), workspace_size,
                                      reinterpret_cast<cudaStream_t>(stream)));
}

void CublasLtGemm::run(const CublasGemmProblem& problem, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
                       CUstream stream, CUdeviceptr bias) {
  const Plan& p = plan(problem);
  enqueue(p, p.algo, session_.workspace(), p.workspace, a, b, c, bias, stream);
}

std::vector<CublasLtAlgorithm> CublasLtGemm::algorithms(const CublasGemmProblem& problem, int count) {
  return session_.candidates(plan(problem), count);
}

const CublasLtGemm::Chosen& CublasLtGemm::chosen(const CublasGemmProblem& problem,
                                                 const CublasLtAlgorithm& algorithm) {
  auto key = std::make_pair(problem, algorithm);
  if (const auto it = chosen_.find(key); it != chosen_.end()) return it->second;
  const Plan& p = plan(problem);
  const CublasLtSession::Checked c = session_.check(p, algorithm, p.compute, p.type, p.type, p.type);
  return chosen_.emplace(std::move(key), c).first->second;
}

std::string CublasLtGemm::rejection(const CublasGemmProblem& problem, const CublasLtAlgorithm& algorithm) {
  return chosen(problem, algorithm).rejection;
}

std::size_t CublasLtGemm::workspace_bytes(const CublasGemmProblem& problem,
                                          const CublasLtAlgorithm& algorithm) {
  return chosen(problem, algorithm).workspace;
}

void CublasLtGemm::run(const CublasGemmProblem& problem, const CublasLtAlgorithm& algorithm, CUdeviceptr a,
                       CUdeviceptr b, CUdeviceptr c, CUstream stream, CUdeviceptr workspace,
                       std::size_t workspace_size, CUdeviceptr bias) {
  const Chosen& ch = chosen(problem, algorithm);
  if (!ch.rejection.empty()) throw Error(ErrorKind::kBadInput, ch.rejection);
  if (workspace == 0) {
    workspace = session_.workspace();
    workspace_size = CublasLtSession::kWorkspaceBytes;
  } else if (workspace_size < ch.workspace) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("cuBLASLt algorithm {} needs {} bytes of workspace, given {}",
                            algorithm.name_suffix(), ch.workspace, workspace_size));
  }
  enqueue(plan(problem), ch.algo, workspace, ch.workspace, a, b, c, bias, stream);
}

std::string CublasLtGemm::algorithm(const CublasGemmProblem& problem) const {
  const auto it = plans_.find(problem);
  return it == plans_.end() ? std::string() : session_.describe(*it->second);
}

}  // namespace ktune::harness
