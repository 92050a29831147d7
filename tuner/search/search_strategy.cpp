#include "tuner/search/search_strategy.hpp"

#include <fmt/format.h>

#include "ktune/error.hpp"
#include "tuner/search/halving_search.hpp"
#include "tuner/search/model_search.hpp"
#include "tuner/search/ordered_search.hpp"

namespace ktune::tuner {

StrategyKind parse_strategy(std::string_view name) {
  if (name == "exhaustive") return StrategyKind::kExhaustive;
  if (name == "random") return StrategyKind::kRandom;
  if (name == "halving") return StrategyKind::kHalving;
  if (name == "model") return StrategyKind::kModel;
  throw Error(ErrorKind::kBadInput,
              fmt::format("unknown strategy '{}' (known: exhaustive, random, halving, model)", name));
}

std::string_view to_string(StrategyKind kind) {
  switch (kind) {
    case StrategyKind::kExhaustive:
      return "exhaustive";
    case StrategyKind::kRandom:
      return "random";
    case StrategyKind::kHalving:
      return "halving";
    case StrategyKind::kModel:
      return "model";
  }
  return "?";
}

std::unique_ptr<SearchStrategy> make_strategy(StrategyKind kind, std::vector<Config> candidates,
                                              const StrategyOptions& options) {
  switch (kind) {
    case StrategyKind::kExhaustive:
      return std::make_unique<OrderedSearch>(std::move(candidates), options, false);
    case StrategyKind::kRandom:
      return std::make_unique<OrderedSearch>(std::move(candidates), options, true);
    case StrategyKind::kHalving:
      return std::make_unique<HalvingSearch>(std::move(candidates), options);
    case StrategyKind::kModel:
      return std::make_unique<ModelSearch>(std::move(candidates), options);
  }
  throw Error(ErrorKind::kBadInput, "unknown strategy kind");
}

}  // namespace ktune::tuner
