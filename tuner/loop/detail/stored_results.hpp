#pragma once
/// Resume (D7): what the cache already holds for one key, by config name, so the tuning loop
/// answers those configs from it instead of measuring them again.

#include <cstdint>
#include <map>
#include <string>

#include "cache/config_cache.hpp"

namespace ktune::tuner::detail {

/// The latest stored result of each candidate config (baselines left out) of (gpu, kernel, shape,
/// dtype, layout), by config name.
std::map<std::string, cache::StoredResult> load_stored_results(const cache::ConfigCache& db, int64_t gpu_id,
                                                               int64_t kernel_id, const std::string& shape,
                                                               DType dtype, const std::string& layout);

/// Whether `stored` answers a request at `fidelity`: cache::StoredResult::answers, except that a
/// compile-only sweep is answered by its own `skipped` rows too (they hold what it would record).
bool answers(const cache::StoredResult& stored, double fidelity, bool compile_only);

}  // namespace ktune::tuner::detail
