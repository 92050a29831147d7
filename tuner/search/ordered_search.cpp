#include "tuner/search/ordered_search.hpp"

#include <numeric>

#include "tuner/search/detail/rng.hpp"

namespace ktune::tuner {

OrderedSearch::OrderedSearch(std::vector<Config> candidates, const StrategyOptions& options, bool shuffle)
    : StrategyBase(std::move(candidates), options), shuffle_(shuffle), order_(size()) {
  std::iota(order_.begin(), order_.end(), size_t{0});
  if (shuffle_) detail::Rng(options_.seed).shuffle(order_);
  order_ = seeds_first(order_);
}

std::vector<Candidate> OrderedSearch::next_batch(size_t max) {
  std::vector<Candidate> out;
  while (out.size() < max && cursor_ < order_.size() && budget_left() > 0) {
    const size_t i = order_[cursor_++];
    if (!seen_[i]) out.push_back(propose(i, 1.0));
  }
  return out;
}

bool OrderedSearch::done() const { return outstanding_ == 0 && (budget_left() == 0 || unseen_ == 0); }

}  // namespace ktune::tuner
