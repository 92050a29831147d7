// The library phase of the tuning loop (TuningLoop::measure_library_candidates): a vendor
// library's best algorithms for the key join its contenders (tuner/library/library_candidates.hpp).
#include <algorithm>

#include <fmt/format.h>

#include "harness/cublaslt_algorithm.hpp"
#include "ktune/error.hpp"
#include "tuner/library/library_candidates.hpp"
#include "tuner/loop/detail/key_run.hpp"
#include "tuner/loop/detail/stored_results.hpp"
#include "tuner/loop/progress.hpp"

namespace ktune::tuner {

void TuningLoop::measure_library_candidates(KeyRun& run) {
  const size_t count = options_.library_algorithms.value_or(run.space.library_algorithms());
  if (count == 0 || deps_.library == nullptr || options_.compile_only || stopping()) return;
  if (!library_serves(run.key.kernel, run.problem)) return;
  std::vector<Config> configs;
  try {
    configs = deps_.library->configs(run.key.kernel, run.problem, count);
  } catch (const Error& e) {
    // The library is an addition to the search, not a condition of it: the templates still decide.
    if (deps_.progress != nullptr)
      deps_.progress->message(fmt::format("no library algorithms for {}: {}", run.s.shape, e.what()));
    return;
  }
  // The contenders are compared at the highest fidelity the search reached.
  double fidelity = 1.0;
  if (!run.known.empty()) {
    fidelity = 0;
    for (const auto& [name, k] : run.known) fidelity = std::max(fidelity, k.fidelity);
  }
  std::vector<std::pair<Config, std::string>> to_measure;
  for (const Config& config : configs) {
    std::string name;
    try {
      name = library_canonical_name(run.key.kernel, run.problem, config);
    } catch (const Error& e) {  // an algorithm the library describes oddly: left out, not fatal
      if (deps_.progress != nullptr)
        deps_.progress->message(
            fmt::format("a library algorithm for {} left out: {}", run.s.shape, e.what()));
      continue;
    }
    run.library_rank.emplace(name, static_cast<int64_t>(run.library_rank.size()));
    ++run.s.library_candidates;
    const auto hit = run.stored.find(name);
    if (hit != run.stored.end() && detail::answers(hit->second, fidelity, false)) {
      ++run.s.from_cache;
      std::optional<double> us;
      if (hit->second.outcome == Outcome::kOk && hit->second.stats) us = hit->second.stats->median_us;
      tally(run, config, name, hit->second.outcome, us, hit->second.measurement_id, fidelity,
            detail::resources_from_json(hit->second.resources_json));
      continue;
    }
    to_measure.emplace_back(config, name);
  }
  if (to_measure.empty()) return;

  std::vector<detail::Prepared> prepared;
  std::vector<measure::CandidateRequest> requests;
  for (const auto& [config, name] : to_measure) {
    detail::Prepared p = detail::prepare_candidate(*run.ctx, config, name, fidelity);
    p.request->id = detail::next_request_id();
    requests.push_back(*p.request);
    prepared.push_back(std::move(p));
  }
  const auto t = detail::Clock::now();
  const std::vector<measure::CandidateResult> results = deps_.measurer->measure_many(std::move(requests));
  run.s.measure_s += detail::seconds_since(t);
  std::vector<cache::Measurement> rows;
  std::vector<size_t> kept;
  for (size_t i = 0; i < results.size() && i < to_measure.size(); ++i) {
    if (results[i].interrupted) continue;  // cut short by a stop: says nothing about the algorithm
    rows.push_back(
        detail::to_measurement(*run.ctx, to_measure[i].first, to_measure[i].second, prepared[i], results[i]));
    rows.back().fidelity = fidelity;
    kept.push_back(i);
  }
  if (rows.empty()) return;
  const std::vector<int64_t> ids = db_.record(run_id_, gpu_id_, run.kernel_id, rows);
  for (size_t j = 0; j < rows.size(); ++j) {
    const cache::Measurement& m = rows[j];
    std::optional<double> us;
    if (m.outcome == Outcome::kOk && m.stats) us = m.stats->median_us;
    ++run.s.measured;
    if (us) ++run.new_successes;
    tally(run, to_measure[kept[j]].first, m.config_name, m.outcome, us, ids.at(j), fidelity,
          prepared[kept[j]].resources);
  }
}

}  // namespace ktune::tuner
