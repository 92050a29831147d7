#include "tuner/loop/detail/stored_results.hpp"

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

bool answers(const cache::StoredResult& stored, double fidelity, bool compile_only) {
  if (compile_only && stored.outcome == ktune::Outcome::kSkipped) return true;
  return stored.answers(fidelity);
}

}  // namespace ktune::tuner::detail
