#pragma once
/// Which config serves a key: the tuned winner, the nearest tuned shape's winner when it serves the
/// problem, or the operator's default config, per the runtime's MissPolicy. Needs no GPU: a
/// BestIndex snapshot and the kernel specs are all it reads.

#include <string>
#include <utility>

#include "cache/best_index.hpp"
#include "harness/device_info.hpp"
#include "kernel_templates/kernel_spec.hpp"
#include "ktune/ktune.hpp"
#include "runtime/detail/op_binding.hpp"

namespace ktune::runtime::detail {

/// The config for `key` on `device` (its name is the index's GPU; its arch picks the default
/// template) and how it was found (config_name, tuned shape and time; launches and workspace are
/// left to the caller). Throws ktune::Error(kNotFound) on a miss with MissPolicy::kError, naming
/// the `ktune tune` command that would fill it.
std::pair<ktune::Config, PlanInfo> choose_plan(const cache::BestIndex& index, MissPolicy policy,
                                               const harness::DeviceInfo& device, const PlanKey& key);

/// The default config of `key` on `arch` (default_spec's), as choose_plan's miss gives it: also the
/// plan a call falls back to when its pointers miss an alignment the chosen config requires.
std::pair<ktune::Config, PlanInfo> default_plan(const PlanKey& key, std::string_view arch);

}  // namespace ktune::runtime::detail
