#pragma once
/// Which keys of a session a shard tunes (`ktune tune --shard I/N`). Every key lands in exactly one
/// shard, the same on every run and every machine given the same command and target, and the shards
/// are balanced by estimated cost, not by count:
///   - a key's text is "kernel|shape|dtype|layout" (the shape canonical in the space's order); equal
///     keys (a shape listed twice) are one key;
///   - its cost is the evaluations it will make: the configs its space keeps for it under the
///     target's limits, capped by the budget (tuner::planned_evaluations); a key whose space cannot
///     be enumerated costs 1 (the loop reports it);
///   - keys are taken by cost, largest first, ties by the FNV-1a 64-bit hash of the key text, then
///     the text, and each goes to the shard with the least cost so far (ties: the lowest index),
///     the greedy "longest processing time first" rule: no shard ends more than one key's cost above
///     the average.
/// Nothing depends on std::hash, the order the keys were listed in, or the machine, so N processes
/// that plan independently agree. The cost uses the target's limits: shards of one array must tune
/// the same command for the same GPU model (or the same --arch).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tuner/inputs/shard_spec.hpp"
#include "tuner/loop/tuning_session.hpp"

namespace ktune::tuner {

/// FNV-1a, 64-bit (offset basis 14695981039346656037, prime 1099511628211).
uint64_t fnv1a64(std::string_view text);

/// "kernel|shape|dtype|layout" of a key (shape canonical in `dims`' order).
std::string shard_key_text(const TuneKey& key, const std::vector<std::string>& dims);

/// One key to place: its text and estimated cost.
struct ShardItem {
  std::string key;
  double cost = 1;
};

/// The shard (0..count-1) of each item, in the items' order, by the rule above. Items with equal
/// `key` get the same shard. Throws ktune::Error(kBadInput) when count is 0.
std::vector<size_t> partition_by_cost(const std::vector<ShardItem>& items, size_t count);

/// What a shard got.
struct ShardSelection {
  std::vector<SessionJob> jobs;  ///< the session's jobs with only this shard's keys (jobs left empty dropped)
  size_t keys = 0;               ///< keys in this shard
  size_t keys_total = 0;         ///< distinct keys over all shards
  double cost = 0;               ///< this shard's estimated evaluations
  double cost_total = 0;
};

/// The keys of `jobs` that shard `spec` tunes (costs from `options`: limits, budget).
ShardSelection select_shard(const std::vector<SessionJob>& jobs, const ShardSpec& spec,
                            const TuneOptions& options);

/// The keys of `jobs` in order, each with its estimated cost (enumerating every key's space: the
/// expensive part of select_shard, so a caller that selects several shards of one session costs
/// the keys once).
std::vector<ShardItem> shard_items(const std::vector<SessionJob>& jobs, const TuneOptions& options);
/// select_shard with the keys already costed (`items` = shard_items(jobs, options)).
ShardSelection select_shard(const std::vector<SessionJob>& jobs, const std::vector<ShardItem>& items,
                            const ShardSpec& spec);

}  // namespace ktune::tuner
