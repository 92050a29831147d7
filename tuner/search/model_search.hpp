#pragma once
/// Model-guided search: a cost model fit to the configs measured so far chooses what to measure
/// next. The model is a Bayesian ridge regression of log(time) on features of the config: per
/// parameter its standardised log2 value and a one-hot of its value, pairwise products of the log2
/// values (tile shape interactions), and a one-hot of the template. After an initial design (the
/// seeds, StrategyOptions::seeds, then seeded random picks; at least as long as the seeds) it proposes, round
/// by round, the unmeasured configs with the lowest lower confidence bound (prediction minus `exploration`
/// posterior standard deviations). Failed configs enter the fit at twice the slowest time seen, so the model
/// learns to avoid where they cluster. Deterministic for a seed.

#include "tuner/search/detail/ridge_model.hpp"
#include "tuner/search/detail/strategy_base.hpp"

namespace ktune::tuner {

class ModelSearch : public detail::StrategyBase {
 public:
  ModelSearch(std::vector<Config> candidates, const StrategyOptions& options);

  std::string_view name() const override { return "model"; }
  std::vector<Candidate> next_batch(size_t max) override;
  bool done() const override { return outstanding_ == 0 && (budget_left() == 0 || unseen_ == 0); }

  /// Feature count per config (for tests and diagnostics).
  size_t feature_count() const { return d_; }

 private:
  void on_report(size_t, std::optional<double>, double, bool) override {}
  void build_features();
  /// Fits the model to the history; false when too few successes to fit.
  bool fit();

  std::vector<size_t> initial_;  ///< seeded random initial design, then the fallback order
  size_t initial_count_ = 0;
  size_t initial_cursor_ = 0;
  size_t d_ = 0;
  std::vector<double> features_;  ///< size() * d_
  detail::RidgeModel model_;
};

}  // namespace ktune::tuner
