#include "tuner/search/detail/strategy_base.hpp"

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::tuner::detail {

StrategyBase::StrategyBase(std::vector<Config> candidates, const StrategyOptions& options)
    : candidates_(std::move(candidates)),
      options_(options),
      seen_(candidates_.size(), 0),
      unseen_(candidates_.size()),
      pending_(candidates_.size(), 0) {
  if (candidates_.empty()) throw Error(ErrorKind::kBadInput, "a search needs at least one candidate config");
  index_.reserve(candidates_.size());
  for (size_t i = 0; i < candidates_.size(); ++i) {
    if (!index_.emplace(candidates_[i].key(), i).second) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("candidate config {} is listed twice", candidates_[i].key()));
    }
  }
  std::vector<char> is_seed(candidates_.size(), 0);
  for (const auto& seed : options_.seeds) {
    const auto it = index_.find(seed.key());
    if (it == index_.end() || is_seed[it->second]) continue;
    is_seed[it->second] = 1;
    seed_indices_.push_back(it->second);
  }
}

std::vector<size_t> StrategyBase::seeds_first(const std::vector<size_t>& order) const {
  std::vector<char> is_seed(candidates_.size(), 0);
  for (size_t i : seed_indices_) is_seed[i] = 1;
  std::vector<size_t> out = seed_indices_;
  out.reserve(order.size());
  for (size_t i : order) {
    if (!is_seed[i]) out.push_back(i);
  }
  return out;
}

Candidate StrategyBase::propose(size_t index, double fidelity) {
  if (!seen_[index]) {
    seen_[index] = 1;
    --unseen_;
  }
  ++pending_[index];
  ++outstanding_;
  ++spent_;
  return {candidates_[index], fidelity};
}

void StrategyBase::report(const Config& config, std::optional<double> time_us, double fidelity) {
  const auto it = index_.find(config.key());
  if (it == index_.end()) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("reported config {} is not a candidate of this search", config.key()));
  }
  const size_t i = it->second;
  const bool solicited = pending_[i] > 0;
  if (solicited) {
    --pending_[i];
    --outstanding_;
  } else {
    ++spent_;
    if (!seen_[i]) {
      seen_[i] = 1;
      --unseen_;
    }
  }
  history_.push_back({config, time_us, fidelity});
  history_index_.push_back(i);
  on_report(i, time_us, fidelity, solicited);
}

std::optional<Evaluation> StrategyBase::best() const {
  const Evaluation* best = nullptr;
  for (const auto& e : history_) {
    if (!e.time_us) continue;
    if (best == nullptr || e.fidelity > best->fidelity ||
        (e.fidelity == best->fidelity && *e.time_us < *best->time_us)) {
      best = &e;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

}  // namespace ktune::tuner::detail
