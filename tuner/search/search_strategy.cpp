#include "tuner/search/search_strategy.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/name_list.hpp"
#include "ktune/error.hpp"
#include "tuner/search/halving_search.hpp"
#include "tuner/search/model_search.hpp"
#include "tuner/search/ordered_search.hpp"

namespace ktune::tuner {

namespace {

std::vector<StrategyEntry>& table() {
  static std::vector<StrategyEntry> t{
      {"exhaustive", "every candidate in enumeration order (seeds first)",
       [](std::vector<Config> c, const StrategyOptions& o) -> std::unique_ptr<SearchStrategy> {
         return std::make_unique<OrderedSearch>(std::move(c), o, false);
       }},
      {"random", "the candidates in a seeded random order (seeds first)",
       [](std::vector<Config> c, const StrategyOptions& o) -> std::unique_ptr<SearchStrategy> {
         return std::make_unique<OrderedSearch>(std::move(c), o, true);
       }},
      {"halving", "successive halving: short measurements of many, full ones of the best",
       [](std::vector<Config> c, const StrategyOptions& o) -> std::unique_ptr<SearchStrategy> {
         return std::make_unique<HalvingSearch>(std::move(c), o);
       }},
      {"model", "a ridge-regression model of the measured configs proposes the next ones",
       [](std::vector<Config> c, const StrategyOptions& o) -> std::unique_ptr<SearchStrategy> {
         return std::make_unique<ModelSearch>(std::move(c), o);
       }},
  };
  return t;
}

const StrategyEntry* find(std::string_view name) {
  const auto& t = table();
  auto it = std::find_if(t.begin(), t.end(), [&](const StrategyEntry& e) { return e.name == name; });
  return it == t.end() ? nullptr : &*it;
}

}  // namespace

const std::vector<StrategyEntry>& strategies() { return table(); }

void register_strategy(StrategyEntry entry) {
  if (entry.name.empty() || entry.make == nullptr)
    throw Error(ErrorKind::kBadInput, "register_strategy: a strategy needs a name and a factory");
  if (find(entry.name) != nullptr)
    throw Error(ErrorKind::kBadInput,
                fmt::format("register_strategy: '{}' is a strategy already", entry.name));
  table().push_back(std::move(entry));
}

std::string strategy_names() {
  std::vector<std::string> names;
  for (const auto& e : table()) names.push_back(e.name);
  return name_list(names);
}

std::string parse_strategy(std::string_view name) {
  if (find(name) == nullptr)
    throw Error(ErrorKind::kBadInput,
                fmt::format("unknown strategy '{}' (known: {})", name, strategy_names()));
  return std::string(name);
}

std::unique_ptr<SearchStrategy> make_strategy(std::string_view name, std::vector<Config> candidates,
                                              const StrategyOptions& options) {
  const StrategyEntry* e = find(name);
  if (e == nullptr)
    throw Error(ErrorKind::kBadInput,
                fmt::format("unknown strategy '{}' (known: {})", name, strategy_names()));
  return e->make(std::move(candidates), options);
}

}  // namespace ktune::tuner
