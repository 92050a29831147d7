#include "tuner/library/cublaslt_algorithm_source.hpp"

#include <memory>

#include "harness/context.hpp"
#include "harness/cublaslt_fp8_gemm.hpp"
#include "harness/cublaslt_gemm.hpp"

namespace ktune::tuner {

struct CublasLtAlgorithmSource::State {
  harness::PrimaryContext context;
  harness::CublasLtGemm gemm;
  std::unique_ptr<harness::CublasLtFp8Gemm> fp8;  ///< opened on the first fp8 key
  explicit State(int device) : context(device) {}
};

CublasLtAlgorithmSource::CublasLtAlgorithmSource(int device) : device_(device) {}
CublasLtAlgorithmSource::~CublasLtAlgorithmSource() = default;

std::vector<Config> CublasLtAlgorithmSource::configs(std::string_view kernel,
                                                     const kernel_templates::Problem& problem,
                                                     std::size_t count) {
  if (count == 0 || !library_serves(kernel, problem)) return {};
  if (!state_) state_ = std::make_unique<State>(device_);
  state_->context.make_current();
  std::vector<Config> out;
  if (kernel == "fp8_gemm") {
    if (!state_->fp8) state_->fp8 = std::make_unique<harness::CublasLtFp8Gemm>();
    const harness::CublasFp8Problem p{problem.dim("m"), problem.dim("n"), problem.dim("k"), false};
    for (const harness::CublasLtAlgorithm& a : state_->fp8->algorithms(p, static_cast<int>(count)))
      out.push_back(a.to_config());
    return out;
  }
  harness::CublasGemmProblem p;
  p.dtype = problem.dtype;
  p.b_nt = harness::library_layout_nt(problem.layout);
  p.bias = harness::library_layout_bias(problem.layout);
  p.m = problem.dim("m");
  p.n = problem.dim("n");
  p.k = problem.dim("k");
  for (const harness::CublasLtAlgorithm& a : state_->gemm.algorithms(p, static_cast<int>(count)))
    out.push_back(a.to_config());
  return out;
}

}  // namespace ktune::tuner
