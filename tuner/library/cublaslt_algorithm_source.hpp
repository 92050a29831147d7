#pragma once
/// cuBLASLt's heuristic queried in this process for the library candidates of a key
/// (tuner/library/library_candidates.hpp). The query launches nothing; the candidates themselves are
/// measured in the worker. Touches no GPU until the first query.

#include <memory>

#include "tuner/library/library_candidates.hpp"

namespace ktune::tuner {

class CublasLtAlgorithmSource final : public LibraryAlgorithms {
 public:
  explicit CublasLtAlgorithmSource(int device);
  ~CublasLtAlgorithmSource() override;
  CublasLtAlgorithmSource(const CublasLtAlgorithmSource&) = delete;
  CublasLtAlgorithmSource& operator=(const CublasLtAlgorithmSource&) = delete;

  std::vector<Config> configs(std::string_view kernel, const kernel_templates::Problem& problem,
                              std::size_t count) override;

 private:
  struct State;
  int device_;
  std::unique_ptr<State> state_;
};

}  // namespace ktune::tuner
