#include "tuner/search/halving_search.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "ktune/error.hpp"
#include "tuner/search/detail/rng.hpp"

namespace ktune::tuner {
namespace {

std::vector<size_t> plan(size_t n0, size_t eta, size_t max_rungs) {
  std::vector<size_t> sizes{n0};
  while (sizes.size() < max_rungs && sizes.back() > 1) sizes.push_back((sizes.back() + eta - 1) / eta);
  return sizes;
}

size_t total(const std::vector<size_t>& sizes) {
  return std::accumulate(sizes.begin(), sizes.end(), size_t{0});
}

}  // namespace

HalvingSearch::HalvingSearch(std::vector<Config> candidates, const StrategyOptions& options)
    : StrategyBase(std::move(candidates), options) {
  if (options_.eta < 2)
    throw Error(ErrorKind::kBadInput, fmt::format("halving needs eta >= 2 (got {})", options_.eta));
  if (!(options_.min_fidelity > 0 && options_.min_fidelity <= 1)) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("halving needs 0 < min_fidelity <= 1 (got {})", options_.min_fidelity));
  }
  // Fidelity levels eta^-(L-1) .. 1 that stay at or above min_fidelity; 1e-9 absorbs rounding of log().
  const auto levels = static_cast<size_t>(
      std::floor(std::log(1.0 / options_.min_fidelity) / std::log(static_cast<double>(options_.eta)) + 1e-9) +
      1);
  size_t n0 = size();
  if (options_.budget > 0) {
    n0 = std::min(n0, options_.budget);
    while (n0 > 1 && total(plan(n0, options_.eta, levels)) > options_.budget) --n0;
  }
  rung_sizes_ = plan(n0, options_.eta, levels);

  std::vector<size_t> order(size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (n0 < size()) detail::Rng(options_.seed).shuffle(order);
  order = seeds_first(order);
  members_.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n0));
  // Rung 0 proposes the seeds first, then the others in enumeration order.
  const size_t seeds = std::min(n0, seed_indices().size());
  std::sort(members_.begin() + static_cast<std::ptrdiff_t>(seeds), members_.end());
  times_.assign(members_.size(), std::nullopt);
  reported_.assign(members_.size(), 0);
}

double HalvingSearch::rung_fidelity(size_t r) const {
  const size_t below_top = rung_sizes_.size() - 1 - r;
  return std::max(options_.min_fidelity,
                  std::pow(static_cast<double>(options_.eta), -static_cast<double>(below_top)));
}

std::vector<Candidate> HalvingSearch::next_batch(size_t max) {
  std::vector<Candidate> out;
  const double fidelity = rung_fidelity(rung_);
  while (!finished_ && out.size() < max && cursor_ < members_.size() && budget_left() > 0) {
    out.push_back(propose(members_[cursor_++], fidelity));
  }
  return out;
}

void HalvingSearch::on_report(size_t index, std::optional<double> time_us, double, bool solicited) {
  if (!solicited || finished_) return;  // unsolicited results are only recorded in the history
  for (size_t m = 0; m < members_.size(); ++m) {
    if (members_[m] == index && !reported_[m] && m < cursor_) {
      reported_[m] = 1;
      times_[m] = time_us;
      ++reported_count_;
      break;
    }
  }
  if (reported_count_ == members_.size()) promote();
}

void HalvingSearch::promote() {
  if (rung_ + 1 >= rung_sizes_.size()) {
    finished_ = true;
    return;
  }
  std::vector<size_t> ok;
  for (size_t m = 0; m < members_.size(); ++m) {
    if (times_[m]) ok.push_back(m);
  }
  std::sort(ok.begin(), ok.end(), [&](size_t a, size_t b) {
    return *times_[a] != *times_[b] ? *times_[a] < *times_[b] : members_[a] < members_[b];
  });
  ok.resize(std::min(ok.size(), rung_sizes_[rung_ + 1]));
  if (ok.empty()) {
    finished_ = true;
    return;
  }
  std::vector<size_t> next;
  for (size_t m : ok) next.push_back(members_[m]);
  std::sort(next.begin(), next.end());
  members_ = std::move(next);
  times_.assign(members_.size(), std::nullopt);
  reported_.assign(members_.size(), 0);
  reported_count_ = 0;
  cursor_ = 0;
  ++rung_;
}

}  // namespace ktune::tuner
