#pragma once
/// Resume (D7): what the cache already holds for one key, by config name, so the tuning loop
/// answers those configs from it instead of measuring them again.

#include <cstdint>
#include <map>
#include <string>

#include "cache/config_cache.hpp"
#include "tuner/space/config_space.hpp"

namespace ktune::tuner::detail {

/// The latest stored result of each candidate config (baselines left out) of (gpu, kernel, shape,
/// dtype, layout), by config name.
std::map<std::string, cache::StoredResult> load_stored_results(const cache::ConfigCache& db, int64_t gpu_id,
                                                               int64_t kernel_id, const std::string& shape,
                                                               DType dtype, const std::string& layout);

/// Whether `stored` answers a request at `fidelity`: cache::StoredResult::answers, except that a
/// compile-only sweep is answered by its own `skipped` rows too (they hold what it would record).
bool answers(const cache::StoredResult& stored, double fidelity, bool compile_only);

/// The configs of `configs` that won (gpu, kernel, shape, dtype) under the kernel's other layouts in
/// this database, best first: a shape's plain and epilogue forms (gemm nt and nt+bias) or its
/// contiguous and paged ones (decode_attention) tend to share their best tile, so a key tuned after
/// its sibling starts from the sibling's winner. A winner is the fastest ok result at the highest
/// fidelity stored for that layout; one that is not among `configs` (a library algorithm, a config
/// this layout's constraints drop) is left out.
std::vector<Config> sibling_winners(const cache::ConfigCache& db, int64_t gpu_id, int64_t kernel_id,
                                    const std::string& kernel, const std::string& shape, DType dtype,
                                    const std::string& layout, const ConfigSpace& space,
                                    const std::vector<Config>& configs);

}  // namespace ktune::tuner::detail
