#include "measure/library_launch.hpp"

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::measure {

LoadedLibraryCall::LoadedLibraryCall(const LaunchSpec& spec)
    : call_(library_gemm_call_from_json(spec.library)), function_(spec.function) {
  algorithm_ = harness::CublasLtAlgorithm::from_config(call_.algorithm);
  if (call_.fp8) {
    fp8_problem_.m = call_.m;
    fp8_problem_.n = call_.n;
    fp8_problem_.k = call_.k;
    fp8_gemm_ = std::make_unique<harness::CublasLtFp8Gemm>();
    violation_ = fp8_gemm_->rejection(fp8_problem_, algorithm_);
    resources_ = {{"library", fp8_gemm_->version()}, {"algorithm", algorithm_.name_suffix()}};
    return;
  }
  problem_.dtype = call_.dtype;
  problem_.b_nt = harness::library_layout_nt(call_.layout);
  problem_.bias = harness::library_layout_bias(call_.layout);
  problem_.m = call_.m;
  problem_.n = call_.n;
  problem_.k = call_.k;
  gemm_ = std::make_unique<harness::CublasLtGemm>();
  violation_ = gemm_->rejection(problem_, algorithm_);
  resources_ = {{"library", gemm_->version()}, {"algorithm", algorithm_.name_suffix()}};
}

void LoadedLibraryCall::bind(const std::vector<const BufferSet*>& sets) {
  bound_.clear();
  for (const BufferSet* set : sets) {
    Bound b{set->at(call_.a), set->at(call_.b), set->at(call_.c)};
    if (call_.fp8) {
      b.a_scale = set->at(call_.a_scale);
      b.b_scale = set->at(call_.b_scale);
    }
    if (problem_.bias) b.bias = set->at(call_.bias);
    bound_.push_back(b);
  }
}

void LoadedLibraryCall::launch(std::size_t set, CUstream stream) {
  const Bound& b = bound_.at(set);
  if (call_.fp8) {
    fp8_gemm_->run(fp8_problem_, algorithm_, b.a, b.b, b.a_scale, b.b_scale, b.c, stream);
    return;
  }
  gemm_->run(problem_, algorithm_, b.a, b.b, b.c, stream, 0, 0, b.bias);
}

}  // namespace ktune::measure
