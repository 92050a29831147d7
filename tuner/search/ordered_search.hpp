#pragma once
/// The two strategies that measure candidates in a fixed order until the budget is spent:
/// exhaustive (enumeration order) and random (a seeded permutation, i.e. sampling without
/// replacement); the seeds (StrategyOptions::seeds) come first in both.

#include "tuner/search/detail/strategy_base.hpp"

namespace ktune::tuner {

class OrderedSearch : public detail::StrategyBase {
 public:
  /// @param shuffle false: enumeration order ("exhaustive"); true: seeded random order ("random")
  OrderedSearch(std::vector<Config> candidates, const StrategyOptions& options, bool shuffle);

  std::string_view name() const override { return shuffle_ ? "random" : "exhaustive"; }
  std::vector<Candidate> next_batch(size_t max) override;
  bool done() const override;

 private:
  void on_report(size_t, std::optional<double>, double, bool) override {}

  bool shuffle_;
  std::vector<size_t> order_;
  size_t cursor_ = 0;
};

}  // namespace ktune::tuner
