#include "tuner/search/model_search.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "tuner/search/detail/rng.hpp"

namespace ktune::tuner {
namespace {

/// Distinct values a parameter may have and still get one-hot features (more would make the fit
/// underdetermined for typical budgets of 24-200 measurements).
constexpr size_t kMaxOneHot = 32;
/// Ridge precision relative to the noise: enough to keep a fit with more features than points stable.
constexpr double kLambda = 1.0;

double log2_feature(int64_t v) { return v > 0 ? std::log2(static_cast<double>(v)) : -1.0; }

}  // namespace

ModelSearch::ModelSearch(std::vector<Config> candidates, const StrategyOptions& options)
    : StrategyBase(std::move(candidates), options) {
  build_features();
  initial_.resize(size());
  std::iota(initial_.begin(), initial_.end(), size_t{0});
  detail::Rng(options_.seed).shuffle(initial_);
  initial_ = seeds_first(initial_);

  size_t params = 0;
  for (const auto& c : candidates_) params = std::max(params, c.params.size());
  const size_t budget = options_.budget == 0 ? size() : std::min(options_.budget, size());
  initial_count_ = options_.initial > 0 ? options_.initial
                                        : std::clamp<size_t>(budget / 3, 4, std::max<size_t>(4, 2 * params));
  initial_count_ = std::min(std::max(initial_count_, seed_indices().size()), size());
}

void ModelSearch::build_features() {
  // Parameter names across all templates, in first-seen order; templates likewise.
  std::vector<std::string> names;
  std::vector<std::string> templates;
  for (const auto& c : candidates_) {
    if (std::find(templates.begin(), templates.end(), c.variant) == templates.end()) {
      templates.push_back(c.variant);
    }
    for (const auto& [n, v] : c.params) {
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
  }
  const size_t np = names.size();
  // Per parameter: mean and spread of log2 values, distinct values.
  std::vector<double> mean(np, 0), sd(np, 0), count(np, 0);
  std::vector<std::set<int64_t>> distinct(np);
  for (const auto& c : candidates_) {
    for (size_t p = 0; p < np; ++p) {
      if (auto v = c.find(names[p])) {
        mean[p] += log2_feature(*v);
        count[p] += 1;
        distinct[p].insert(*v);
      }
    }
  }
  for (size_t p = 0; p < np; ++p) mean[p] = count[p] > 0 ? mean[p] / count[p] : 0;
  for (const auto& c : candidates_) {
    for (size_t p = 0; p < np; ++p) {
      if (auto v = c.find(names[p])) sd[p] += std::pow(log2_feature(*v) - mean[p], 2);
    }
  }
  for (size_t p = 0; p < np; ++p) sd[p] = count[p] > 1 ? std::sqrt(sd[p] / count[p]) : 0;

  // Layout: [template one-hot][log2 per param][one-hot per param][pairwise products].
  std::vector<size_t> onehot_base(np, 0);
  size_t d = templates.size() > 1 ? templates.size() : 0;
  const size_t log_base = d;
  d += np;
  for (size_t p = 0; p < np; ++p) {
    onehot_base[p] = d;
    if (distinct[p].size() >= 2 && distinct[p].size() <= kMaxOneHot) d += distinct[p].size();
  }
  const size_t pair_base = d;
  d += np * (np - 1) / 2;
  d_ = d;

  features_.assign(size() * d_, 0.0);
  std::vector<double> z(np);
  for (size_t i = 0; i < size(); ++i) {
    double* row = &features_[i * d_];
    const Config& c = candidates_[i];
    if (templates.size() > 1) {
      row[std::find(templates.begin(), templates.end(), c.variant) - templates.begin()] = 1;
    }
    for (size_t p = 0; p < np; ++p) {
      z[p] = 0;
      const auto v = c.find(names[p]);
      if (!v) continue;
      z[p] = sd[p] > 0 ? (log2_feature(*v) - mean[p]) / sd[p] : 0;
      row[log_base + p] = z[p];
      if (distinct[p].size() >= 2 && distinct[p].size() <= kMaxOneHot) {
        row[onehot_base[p] + static_cast<size_t>(std::distance(distinct[p].begin(), distinct[p].find(*v)))] =
            1;
      }
    }
    size_t k = pair_base;
    for (size_t p = 0; p < np; ++p) {
      for (size_t q = p + 1; q < np; ++q) row[k++] = z[p] * z[q];
    }
  }
}

bool ModelSearch::fit() {
  // Latest result per candidate.
  std::map<size_t, std::optional<double>> latest;
  for (size_t h = 0; h < history_.size(); ++h) latest[history_index_[h]] = history_[h].time_us;
  double worst = -INFINITY;
  size_t ok = 0;
  for (const auto& [i, t] : latest) {
    if (t && *t > 0) {
      worst = std::max(worst, std::log(*t));
      ++ok;
    }
  }
  if (ok < 2) return false;
  std::vector<double> x;
  std::vector<double> y;
  for (const auto& [i, t] : latest) {
    x.insert(x.end(), features_.begin() + static_cast<std::ptrdiff_t>(i * d_),
             features_.begin() + static_cast<std::ptrdiff_t>((i + 1) * d_));
    y.push_back(t && *t > 0 ? std::log(*t) : worst + std::log(2.0));
  }
  model_.fit(x, d_, y, kLambda);
  return true;
}

std::vector<Candidate> ModelSearch::next_batch(size_t max) {
  std::vector<Candidate> out;
  const size_t room = std::min(max, budget_left());
  // Initial design: the first initial_count_ configs of a seeded permutation.
  while (out.size() < room && initial_cursor_ < initial_count_) {
    const size_t i = initial_[initial_cursor_++];
    if (!seen_[i]) out.push_back(propose(i, 1.0));
  }
  if (!out.empty() || initial_cursor_ < initial_count_ || outstanding_ > 0 || room == 0 || unseen_ == 0) {
    return out;  // a round starts only once every earlier proposal is reported
  }
  const size_t take = std::min({room, options_.model_batch > 0 ? options_.model_batch : size_t{1}, unseen_});
  if (!fit()) {
    // Too few successes to fit: continue along the random order.
    for (size_t c = initial_count_; c < initial_.size() && out.size() < take; ++c) {
      if (!seen_[initial_[c]]) out.push_back(propose(initial_[c], 1.0));
    }
    return out;
  }
  std::vector<std::pair<double, size_t>> scored;
  scored.reserve(unseen_);
  for (size_t i = 0; i < size(); ++i) {
    if (seen_[i]) continue;
    const double* row = &features_[i * d_];
    scored.emplace_back(model_.predict(row) - options_.exploration * model_.stddev(row), i);
  }
  std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(take), scored.end());
  for (size_t k = 0; k < take; ++k) out.push_back(propose(scored[k].second, 1.0));
  return out;
}

}  // namespace ktune::tuner
