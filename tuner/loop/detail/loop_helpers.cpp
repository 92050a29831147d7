#include <algorithm>
#include <atomic>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "kernel_templates/spec_registry.hpp"
#include "tuner/loop/detail/key_run.hpp"

namespace ktune::tuner::detail {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

uint64_t next_request_id() {
  static std::atomic<uint64_t> next{1};
  return next++;
}

size_t launch_count(const std::string& kernel, const kernel_templates::Problem& problem,
                    const Config& config) {
  return kernel_templates::find_spec(kernel, config.variant).launch_plan(problem, config).launches.size();
}

Resources resources_from_json(const std::string& text) {
  Resources r;
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return r;
  r.registers_per_thread = j.value("registers", int64_t{0});
  r.threads_per_block = j.value("threads_per_block", int64_t{0});
  r.static_smem_bytes = j.value("static_smem_bytes", int64_t{0});
  r.dynamic_smem_bytes = j.value("dynamic_smem_bytes", int64_t{0});
  r.local_bytes = j.value("local_bytes", int64_t{0});
  return r;
}

void drop_unusable_seeds(Enumeration& e, const std::string& kernel, std::string_view arch) {
  if (e.seeds.empty()) return;
  std::unordered_set<std::string> keys;
  for (const auto& c : e.configs) keys.insert(c.key());
  const auto before = e.seeds.size();
  std::erase_if(e.seeds, [&](const Config& seed) {
    if (!keys.contains(seed.key())) return true;
    return kernel_templates::find_spec(kernel, seed.variant).arch_rejection(arch).has_value();
  });
  e.seed_rejected += before - e.seeds.size();
}

std::vector<std::pair<std::string, const Known*>> top_contenders(const std::map<std::string, Known>& known,
                                                                 int top_k) {
  double top_fidelity = 0;
  for (const auto& [name, k] : known) top_fidelity = std::max(top_fidelity, k.fidelity);
  std::vector<std::pair<std::string, const Known*>> top;
  for (const auto& [name, k] : known)
    if (k.fidelity == top_fidelity) top.emplace_back(name, &k);
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
    return a.second->median_us != b.second->median_us ? a.second->median_us < b.second->median_us
                                                      : a.first < b.first;
  });
  top.resize(std::min(top.size(), static_cast<size_t>(std::max(1, top_k))));
  return top;
}

}  // namespace ktune::tuner::detail
