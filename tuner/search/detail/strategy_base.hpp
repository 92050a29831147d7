#pragma once
/// Bookkeeping every strategy shares: the candidates and their index, what was proposed and is
/// still awaited, the budget spent, the history and the best result.

#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "tuner/search/search_strategy.hpp"

namespace ktune::tuner::detail {

class StrategyBase : public SearchStrategy {
 public:
  void report(const Config& config, std::optional<double> time_us, double fidelity) final;
  std::optional<Evaluation> best() const override;
  const std::vector<Evaluation>& history() const override { return history_; }

 protected:
  /// Throws ktune::Error(kBadInput) for no candidates or a repeated one.
  StrategyBase(std::vector<Config> candidates, const StrategyOptions& options);

  /// Marks candidate `index` proposed at `fidelity` (spends one unit of budget) and returns it.
  Candidate propose(size_t index, double fidelity);
  /// Called after a report is recorded; `solicited` is false for a config that was not awaited.
  virtual void on_report(size_t index, std::optional<double> time_us, double fidelity, bool solicited) = 0;

  /// Measurements the budget still allows (SIZE_MAX when unlimited).
  size_t budget_left() const {
    if (options_.budget == 0) return std::numeric_limits<size_t>::max();
    return spent_ >= options_.budget ? 0 : options_.budget - spent_;
  }
  size_t size() const { return candidates_.size(); }
  /// Candidate indices of options_.seeds that are candidates, in seed order, without repeats.
  const std::vector<size_t>& seed_indices() const { return seed_indices_; }
  /// `order` (a permutation of the candidate indices) with the seeds moved to the front in seed
  /// order; the others keep their relative order.
  std::vector<size_t> seeds_first(const std::vector<size_t>& order) const;

  std::vector<Config> candidates_;
  StrategyOptions options_;
  std::vector<char> seen_;  ///< proposed or reported at least once
  size_t unseen_ = 0;       ///< candidates never proposed nor reported
  size_t outstanding_ = 0;  ///< proposals not yet reported
  size_t spent_ = 0;        ///< proposals plus unsolicited reports
  std::vector<Evaluation> history_;
  std::vector<size_t> history_index_;  ///< candidate index of each history entry

 private:
  std::vector<unsigned> pending_;  ///< outstanding proposals per candidate
  std::unordered_map<std::string, size_t> index_;
  std::vector<size_t> seed_indices_;
};

}  // namespace ktune::tuner::detail
