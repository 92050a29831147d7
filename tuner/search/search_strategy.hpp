#pragma once
/// Search strategies over the configs a space kept for one problem (`--strategy`, `--budget`).
///
/// A tuning loop drives a strategy incrementally:
///
///     auto s = make_strategy("model", enumeration.configs, {.budget = 64, .seed = 1});
///     while (!s->done()) {
///       auto batch = s->next_batch(pool_size);      // may be empty while reports are awaited
///       for (auto& c : batch) {                     // compile in parallel, then measure
///         auto t = cached(c.config) ? cached_time : measure(c.config, c.fidelity);
///         s->report(c.config, t, c.fidelity);       // nullopt = failed (any outcome but ok)
///       }
///     }
///     auto winner = s->best();
///
/// Resume: strategies are deterministic for a seed, so a restarted sweep is proposed the same
/// configs in the same order; the loop answers those the cache already holds from the cache, and
/// measures only the rest. A report for a config that was never proposed (e.g. a cached result fed
/// in up front) is accepted: it is recorded, counts against the budget, and is not proposed again
/// (successive halving only records it).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.hpp"

namespace ktune::tuner {

/// A config to measure and how hard: `fidelity` multiplies the timer's sample count / time cap
/// (1 = the full protocol; successive halving asks for less in its early rungs).
struct Candidate {
  Config config;
  double fidelity = 1.0;
};

/// One reported result, in report order.
struct Evaluation {
  Config config;
  std::optional<double> time_us;  ///< nullopt when the config failed
  double fidelity = 1.0;
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;

  /// Its name in strategies() ("exhaustive", "random", "halving", "model").
  virtual std::string_view name() const = 0;
  /// Up to `max` configs to measure next (max > 0). Empty when done(), or when the strategy waits
  /// for reports of configs it already proposed before it can choose more.
  virtual std::vector<Candidate> next_batch(size_t max) = 0;
  /// The result of measuring `config` at `fidelity`; `time_us` nullopt when it failed. Throws
  /// ktune::Error(kBadInput) for a config that is not one of the candidates.
  virtual void report(const Config& config, std::optional<double> time_us, double fidelity) = 0;
  /// True when the strategy will propose nothing more (budget spent or space exhausted) and every
  /// proposed config has been reported.
  virtual bool done() const = 0;

  /// The best result so far: the fastest among the results at the highest fidelity any config was
  /// measured at (ties: the earlier report). Nullopt when nothing succeeded.
  virtual std::optional<Evaluation> best() const = 0;
  /// Every report, in order.
  virtual const std::vector<Evaluation>& history() const = 0;
};

struct StrategyOptions {
  /// Most measurements (reports) to spend; 0 = no limit (every candidate, for halving every
  /// candidate in the first rung).
  size_t budget = 0;
  uint64_t seed = 0x6B74756E65ULL;  ///< "ktune"
  /// Successive halving: keep the best 1/eta of a rung; each rung's fidelity is eta times the
  /// previous one's, the last rung's is 1.
  size_t eta = 3;
  /// Successive halving: lowest fidelity asked for (a timer needs a few samples to mean anything;
  /// 1/27 is three rungs below full with eta = 3).
  double min_fidelity = 1.0 / 27;
  /// Model-guided: configs measured before the first fit; 0 = automatic (a third of the budget,
  /// between 4 and twice the number of parameters).
  size_t initial = 0;
  /// Model-guided: configs proposed per round after the first fit (smaller rounds use the model
  /// more; larger ones keep more compile threads busy).
  size_t model_batch = 4;
  /// Model-guided: weight of the model's uncertainty in the lower confidence bound it minimises.
  double exploration = 1.0;
  /// Configs to evaluate before the strategy's own picks, in this order (a space's seeds,
  /// Enumeration::seeds). They count against the budget: a budget smaller than their number
  /// evaluates only seeds. Exhaustive and random: the seeds, then the rest in their order;
  /// halving: rung 0 starts with them; model: the initial design starts with them (and is at least
  /// as long), so their results are the first points of the fit. A seed that is not a candidate
  /// (dropped for the shape) or is repeated is ignored.
  std::vector<Config> seeds = {};
};

/// A strategy over `candidates` (the configs a space kept, in enumeration order). Throws
/// ktune::Error(kBadInput) when `candidates` is empty or holds a config twice.
using StrategyFactory = std::unique_ptr<SearchStrategy> (*)(std::vector<Config> candidates,
                                                            const StrategyOptions& options);

/// One search strategy: the name `--strategy`, a preset's `strategy` and a job's "strategy" give,
/// a line of help, and how it is made.
struct StrategyEntry {
  std::string name;
  std::string help;
  StrategyFactory make = nullptr;
};

/// Every strategy, in the order help texts list them: the one table the command line, presets,
/// the service and the tuning loop read (search_strategy.cpp). A new strategy is its own file plus
/// a row there (docs/extending.md).
const std::vector<StrategyEntry>& strategies();
/// Adds a strategy to the table at run time (a test's toy strategy); throws ktune::Error(kBadInput)
/// for a name the table holds. Not thread-safe: call before any tuning starts.
void register_strategy(StrategyEntry entry);
/// The names, "exhaustive, random, halving or model".
std::string strategy_names();
/// `name` when it names a strategy; throws ktune::Error(kBadInput) listing the known ones.
std::string parse_strategy(std::string_view name);

/// The strategy `name` over `candidates`; throws ktune::Error(kBadInput) for an unknown name, empty
/// candidates, or a config given twice.
std::unique_ptr<SearchStrategy> make_strategy(std::string_view name, std::vector<Config> candidates,
                                              const StrategyOptions& options = {});

}  // namespace ktune::tuner
