#pragma once
/// Successive halving (Jamieson & Talwalkar 2016): measure n0 configs briefly (low fidelity), keep
/// the best 1/eta, measure those again with eta times the fidelity, and so on; the last rung is
/// measured at full fidelity. n0 is the largest number of candidates whose rungs fit the budget;
/// when n0 is smaller than the space, rung 0 is the seeds (StrategyOptions::seeds) and a seeded
/// random sample of the rest. The number of rungs is
/// bounded by the fidelity range (min_fidelity .. 1) and by reaching a single survivor.

#include "tuner/search/detail/strategy_base.hpp"

namespace ktune::tuner {

class HalvingSearch : public detail::StrategyBase {
 public:
  HalvingSearch(std::vector<Config> candidates, const StrategyOptions& options);

  std::string_view name() const override { return "halving"; }
  std::vector<Candidate> next_batch(size_t max) override;
  bool done() const override { return outstanding_ == 0 && (finished_ || budget_left() == 0); }

  /// Planned rung sizes (the survivors may be fewer when configs fail).
  const std::vector<size_t>& rung_sizes() const { return rung_sizes_; }
  /// Fidelity of rung `r`.
  double rung_fidelity(size_t r) const;
  /// The rung being measured now.
  size_t rung() const { return rung_; }

 private:
  void on_report(size_t index, std::optional<double> time_us, double fidelity, bool solicited) override;
  void promote();

  std::vector<size_t> rung_sizes_;
  size_t rung_ = 0;
  std::vector<size_t> members_;               ///< candidate indices of the current rung
  std::vector<std::optional<double>> times_;  ///< result per member
  std::vector<char> reported_;                ///< per member
  size_t reported_count_ = 0;
  size_t cursor_ = 0;
  bool finished_ = false;
};

}  // namespace ktune::tuner
