#include "measure/retime.hpp"

#include <algorithm>

namespace ktune::measure {

std::vector<CandidateResult> retime_interleaved(CandidateRunner& runner,
                                                std::vector<CandidateRequest> candidates, int rounds) {
  rounds = std::max(rounds, 1);
  const std::size_t n = candidates.size();
  for (CandidateRequest& c : candidates) c.timing.max_time_ms = std::max(c.timing.max_time_ms / rounds, 1.0);
  std::vector<CandidateResult> out(n);
  std::vector<bool> failed(n, false);
  std::vector<bool> seen(n, false);
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = round % 2 == 0 ? k : n - 1 - k;
      if (failed[i]) continue;
      CandidateResult r = runner.run(candidates[i]);
      if (r.outcome != Outcome::kOk || !r.stats) {
        failed[i] = true;
        out[i] = std::move(r);
        continue;
      }
      if (!seen[i]) {
        out[i] = std::move(r);
        seen[i] = true;
        continue;
      }
      CandidateResult& acc = out[i];
      acc.samples_us.insert(acc.samples_us.end(), r.samples_us.begin(), r.samples_us.end());
      acc.wall_ms += r.wall_ms;
      acc.sm_clock_mhz = r.sm_clock_mhz ? r.sm_clock_mhz : acc.sm_clock_mhz;
      acc.temperature_c = r.temperature_c ? r.temperature_c : acc.temperature_c;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    CandidateResult& r = out[i];
    if (failed[i] || r.samples_us.empty()) continue;
    r.stats = summarize(r.samples_us);
    r.stop_reason = "retimed";
    if (candidates[i].bytes_moved > 0) r.gbps = candidates[i].bytes_moved / (r.stats->median * 1e-6) / 1e9;
    if (candidates[i].flops > 0) r.tflops = candidates[i].flops / (r.stats->median * 1e-6) / 1e12;
  }
  return out;
}

}  // namespace ktune::measure
