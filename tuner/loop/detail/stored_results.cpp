#include "tuner/loop/detail/stored_results.hpp"

#include <algorithm>
#include <optional>

#include "kernel_templates/kernel_catalog.hpp"

namespace ktune::tuner::detail {

std::map<std::string, cache::StoredResult> load_stored_results(const cache::ConfigCache& db, int64_t gpu_id,
                                                               int64_t kernel_id, const std::string& shape,
                                                               DType dtype, const std::string& layout) {
  std::map<std::string, cache::StoredResult> out;
  for (cache::StoredResult& r : db.results_for(gpu_id, kernel_id, shape, dtype, layout)) {
    if (!r.baseline.empty()) continue;
    std::string name = r.config_name;
    out.emplace(std::move(name), std::move(r));
  }
  return out;
}

std::vector<Config> sibling_winners(const cache::ConfigCache& db, int64_t gpu_id, int64_t kernel_id,
                                    const std::string& kernel, const std::string& shape, DType dtype,
                                    const std::string& layout, const ConfigSpace& space,
                                    const std::vector<Config>& configs) {
  struct Win {
    double median_us;
    std::string layout;
    std::string name;
  };
  std::vector<Win> wins;
  for (const std::string& other : kernel_templates::find_kernel(kernel)->layouts) {
    if (other == layout) continue;
    std::optional<cache::StoredResult> best;
    for (cache::StoredResult& r : db.results_for(gpu_id, kernel_id, shape, dtype, other)) {
      if (!r.baseline.empty() || r.outcome != ktune::Outcome::kOk || !r.stats) continue;
      if (!best || r.fidelity > best->fidelity ||
          (r.fidelity == best->fidelity && r.stats->median_us < best->stats->median_us))
        best = std::move(r);
    }
    if (best) wins.push_back({best->stats->median_us, other, best->config_name});
  }
  std::sort(wins.begin(), wins.end(), [](const Win& a, const Win& b) { return a.median_us < b.median_us; });
  std::vector<Config> out;
  for (const Win& w : wins) {
    for (const Config& c : configs) {
      if (space.canonical_name(c, dtype, w.layout) != w.name) continue;
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
      break;
    }
  }
  return out;
}

bool answers(const cache::StoredResult& stored, double fidelity, bool compile_only) {
  if (compile_only && stored.outcome == ktune::Outcome::kSkipped) return true;
  return stored.answers(fidelity);
}

}  // namespace ktune::tuner::detail
