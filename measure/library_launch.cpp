#include "measure/library_launch.hpp"

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::harness {

LoadedLibraryCall::LoadedLibraryCall(const LaunchSpec& spec)
    : call_(library_gemm_call_from_json(spec.library)), function_(spec.function) {
  algorithm_ = CublasLtAlgorithm::from_config(call_.algorithm);
  problem_.dtype = call_.dtype;
  problem_.b_nt = call_.layout == "nt";
  problem_.m = call_.m;
  problem_.n = call_.n;
  problem_.k = call_.k;
  gemm_ = std::make_unique<CublasLtGemm>();
  violation_ = gemm_->rejection(problem_, algorithm_);
  resources_ = {{"library", gemm_->version()}, {"algorithm", algorithm_.name_suffix()}};
}

void LoadedLibraryCall::bind(const std::vector<const BufferSet*>& sets) {
  bound_.clear();
  for (const BufferSet* set : sets) bound_.push_back({set->at(call_.a), set->at(call_.b), set->at(call_.c)});
}

void LoadedLibraryCall::launch(std::size_t set, CUstream stream) {
  const Bound& b = bound_.at(set);
  gemm_->run(problem_, algorithm_, b.a, b.b, b.c, stream);
}

}  // namespace ktune::harness
