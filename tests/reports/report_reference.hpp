#pragma once
/// An independent reference for what a report derives from a fixture: per key, the winner named
/// in the fixture and the baseline (cublas before default; within one name the latest measured),
/// and each measurement's expected speed-up. Written apart from ReportBuilder, from the fixture alone.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "report_fixture.hpp"

namespace ktune::reports::testing {

struct Expected {
  std::set<int64_t> winners;
  std::map<int64_t, double> speedup;           ///< by measurement id, for ok rows with a baseline
  std::map<int64_t, std::string> baseline_of;  ///< baseline name by measurement id
};

inline Expected expected_for(const Fixture& f) {
  using Key = std::tuple<std::string, std::string, std::string, DType, std::string>;
  std::map<Key, const cache::StoredMeasurement*> baseline;
  const auto key_of = [](const cache::StoredMeasurement& m) {
    return Key{m.gpu.name, m.kernel.name, m.m.shape, m.m.dtype, m.m.layout};
  };
  const auto rank = [](const std::string& name) { return name == "cublas" ? 0 : name == "default" ? 1 : 2; };
  for (const cache::StoredMeasurement& m : f.measurements) {
    if (m.m.baseline.empty() || m.m.outcome != ktune::Outcome::kOk) continue;
    const cache::StoredMeasurement*& held = baseline[key_of(m)];
    if (held == nullptr || rank(m.m.baseline) < rank(held->m.baseline) ||
        (m.m.baseline == held->m.baseline &&
         (m.measured_at > held->measured_at || (m.measured_at == held->measured_at && m.id > held->id)))) {
      held = &m;
    }
  }
  Expected e;
  e.winners.insert(f.best_ids.begin(), f.best_ids.end());
  for (const cache::StoredMeasurement& m : f.measurements) {
    const auto it = baseline.find(key_of(m));
    if (it == baseline.end() || m.m.outcome != ktune::Outcome::kOk) continue;
    e.speedup[m.id] = it->second->m.stats->median_us / m.m.stats->median_us;
    e.baseline_of[m.id] = it->second->m.baseline;
  }
  return e;
}

}  // namespace ktune::reports::testing
