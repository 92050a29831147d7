#include "tuner/loop/candidate_measurer.hpp"

#include <string>

#include "measure/retime.hpp"

namespace ktune::tuner {

std::vector<harness::CandidateResult> CandidateMeasurer::measure_many(
    std::vector<harness::CandidateRequest> requests) {
  std::vector<harness::CandidateResult> out;
  out.reserve(requests.size());
  for (const auto& r : requests) out.push_back(measure(r));
  return out;
}

RunnerMeasurer::RunnerMeasurer(int device, const std::atomic<bool>* stop) {
  harness::RunnerOptions options;
  options.stop = stop;
  options.worker_command = harness::default_worker_command();
  options.worker_command.insert(options.worker_command.end(), {"--device", std::to_string(device)});
  runner_ = std::make_unique<harness::CandidateRunner>(options);
}

RunnerMeasurer::~RunnerMeasurer() { runner_->shutdown(); }

harness::CandidateResult RunnerMeasurer::measure(const harness::CandidateRequest& request) {
  return runner_->run(request);
}

std::vector<harness::CandidateResult> RunnerMeasurer::retime(std::vector<harness::CandidateRequest> requests,
                                                             int rounds) {
  return harness::retime_interleaved(*runner_, std::move(requests), rounds);
}

}  // namespace ktune::tuner
