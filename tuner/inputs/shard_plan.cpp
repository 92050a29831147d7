#include "tuner/inputs/shard_plan.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::tuner {

uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 14695981039346656037ULL;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string shard_key_text(const TuneKey& key, const std::vector<std::string>& dims) {
  return fmt::format("{}|{}|{}|{}", key.kernel, key.shape.normalized(dims).canonical(), to_string(key.dtype),
                     key.layout);
}

std::vector<size_t> partition_by_cost(const std::vector<ShardItem>& items, size_t count) {
  if (count == 0) throw Error(ErrorKind::kBadInput, "the shard count must be at least 1");
  // One entry per distinct key (the first item's cost).
  std::map<std::string, double> cost_of;
  for (const ShardItem& item : items) cost_of.emplace(item.key, item.cost);
  struct Entry {
    const std::string* key;
    double cost;
    uint64_t hash;
  };
  std::vector<Entry> order;
  order.reserve(cost_of.size());
  for (const auto& [key, cost] : cost_of) order.push_back({&key, cost, fnv1a64(key)});
  std::sort(order.begin(), order.end(), [](const Entry& a, const Entry& b) {
    if (a.cost != b.cost) return a.cost > b.cost;
    if (a.hash != b.hash) return a.hash < b.hash;
    return *a.key < *b.key;
  });
  std::vector<double> load(count, 0.0);
  std::map<std::string, size_t> shard_of;
  for (const Entry& e : order) {
    const size_t lightest = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[lightest] += e.cost;
    shard_of.emplace(*e.key, lightest);
  }
  std::vector<size_t> out;
  out.reserve(items.size());
  for (const ShardItem& item : items) out.push_back(shard_of.at(item.key));
  return out;
}

std::vector<ShardItem> shard_items(const std::vector<SessionJob>& jobs, const TuneOptions& options) {
  std::vector<ShardItem> items;
  for (const SessionJob& job : jobs) {
    for (const TuneKey& key : job.keys) {
      double cost = 1;
      try {
        cost = static_cast<double>(std::max<size_t>(1, planned_evaluations(job.space, key, options)));
      } catch (const Error&) {
        // the loop reports a key whose space cannot be enumerated; it still belongs to one shard
      }
      items.push_back({shard_key_text(key, job.space.dims()), cost});
    }
  }
  return items;
}

ShardSelection select_shard(const std::vector<SessionJob>& jobs, const ShardSpec& spec,
                            const TuneOptions& options) {
  return select_shard(jobs, shard_items(jobs, options), spec);
}

ShardSelection select_shard(const std::vector<SessionJob>& jobs, const std::vector<ShardItem>& items,
                            const ShardSpec& spec) {
  const std::vector<size_t> shard = partition_by_cost(items, spec.count);

  ShardSelection out;
  std::map<std::string, bool> seen;  // key text -> already taken (a key listed twice is tuned once)
  size_t i = 0;
  for (const SessionJob& job : jobs) {
    SessionJob mine{job.kernel, job.space, {}};
    for (const TuneKey& key : job.keys) {
      const ShardItem& item = items[i];
      const size_t s = shard[i++];
      const bool first = seen.emplace(item.key, true).second;
      if (!first) continue;
      ++out.keys_total;
      out.cost_total += item.cost;
      if (s != spec.index) continue;
      ++out.keys;
      out.cost += item.cost;
      mine.keys.push_back(key);
    }
    if (!mine.keys.empty()) out.jobs.push_back(std::move(mine));
  }
  return out;
}

}  // namespace ktune::tuner
