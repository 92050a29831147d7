#include "harness/cublaslt_fp8_gemm.hpp"

#include <fmt/format.h>

#include "harness/cuda_check.hpp"

namespace ktune::harness {

#define KTUNE_CUBLASLT_FP8_CHECK(call) check_cublas(session_.api(), session_.api().call, #call, KTUNE_WHERE)

/// The matmul plan of one problem and the scale pointers last set on its descriptor (descriptor
/// attributes: set again only when they change).
struct CublasLtFp8Gemm::Plan : CublasLtMatmulPlan {
  using CublasLtMatmulPlan::CublasLtMatmulPlan;
  CUdeviceptr a_scale = 0;
  CUdeviceptr b_scale = 0;
};

CublasLtFp8Gemm::CublasLtFp8Gemm() = default;
CublasLtFp8Gemm::~CublasLtFp8Gemm() = default;

std::string CublasLtFp8Gemm::version() const { return session_.version(); }

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
  auto plan = std::make_unique<Plan>(session_.api());
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

  // The heuristic must see scale pointers set (any non-null value) to pick an algorithm that honours
  // them; the real ones are set before each launch.
  const void* placeholder = reinterpret_cast<const void*>(static_cast<uintptr_t>(session_.workspace()));
  KTUNE_CUBLASLT_FP8_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                                          &placeholder, sizeof placeholder));
  KTUNE_CUBLASLT_FP8_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                                          &placeholder, sizeof placeholder));
  if (!session_.choose_algorithm(*plan)) {
    throw Error(ErrorKind::kRuntime,
                fmt::format("cuBLASLt offers no fp8 algorithm for m={} n={} k={}", p.m, p.n, p.k));
  }
  return *plans_.emplace(p, std::move(plan)).first->second;
}

void CublasLtFp8Gemm::enqueue(Plan& p, const cublasLtMatmulAlgo_t& algo, CUdeviceptr workspace,
                              std::size_t workspace_size, CUdeviceptr a, CUdeviceptr b, CUdeviceptr a_scale,
                              CUdeviceptr b_scale, CUdeviceptr c, CUstream stream) {
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
  KTUNE_CUBLASLT_FP8_CHECK(cublasLtMatmul(session_.handle(), p.desc, &alpha, ptr(b), p.a, ptr(a), p.b, &beta,
                                          ptr(c), p.c, ptr(c), p.c, &algo, ptr(workspace), workspace_size,
                                          reinterpret_cast<cudaStream_t>(stream)));
}

void CublasLtFp8Gemm::run(const CublasFp8Problem& problem, CUdeviceptr a, CUdeviceptr b, CUdeviceptr a_scale,
                          CUdeviceptr b_scale, CUdeviceptr c, CUstream stream) {
  Plan& p = plan(problem);
  enqueue(p, p.algo, session_.workspace(), p.workspace, a, b, a_scale, b_scale, c, stream);
}

std::vector<CublasLtAlgorithm> CublasLtFp8Gemm::algorithms(const CublasFp8Problem& problem, int count) {
  return session_.candidates(plan(problem), count);
}

const CublasLtFp8Gemm::Chosen& CublasLtFp8Gemm::chosen(const CublasFp8Problem& problem,
                                                       const CublasLtAlgorithm& algorithm) {
  auto key = std::make_pair(problem, algorithm);
  if (const auto it = chosen_.find(key); it != chosen_.end()) return it->second;
  const CublasLtSession::Checked c = session_.check(plan(problem), algorithm, CUBLAS_COMPUTE_32F,
                                                    CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF);
  return chosen_.emplace(std::move(key), c).first->second;
}

std::string CublasLtFp8Gemm::rejection(const CublasFp8Problem& problem, const CublasLtAlgorithm& algorithm) {
  return chosen(problem, algorithm).rejection;
}

std::size_t CublasLtFp8Gemm::workspace_bytes(const CublasFp8Problem& problem,
                                             const CublasLtAlgorithm& algorithm) {
  return chosen(problem, algorithm).workspace;
}

void CublasLtFp8Gemm::run(const CublasFp8Problem& problem, const CublasLtAlgorithm& algorithm, CUdeviceptr a,
                          CUdeviceptr b, CUdeviceptr a_scale, CUdeviceptr b_scale, CUdeviceptr c,
                          CUstream stream, CUdeviceptr workspace, std::size_t workspace_size) {
  const Chosen& ch = chosen(problem, algorithm);
  if (!ch.rejection.empty()) throw Error(ErrorKind::kBadInput, ch.rejection);
  if (workspace == 0) {
    workspace = session_.workspace();
  } else if (workspace_size < ch.workspace) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("cuBLASLt algorithm {} needs {} bytes of workspace, given {}",
                            algorithm.name_suffix(), ch.workspace, workspace_size));
  }
  enqueue(plan(problem), ch.algo, workspace, ch.workspace, a, b, a_scale, b_scale, c, stream);
}

std::string CublasLtFp8Gemm::algorithm(const CublasFp8Problem& problem) const {
  const auto it = plans_.find(problem);
  return it == plans_.end() ? std::string() : session_.describe(*it->second);
}

}  // namespace ktune::harness
