#include "tuner/loop/candidate_measurer.hpp"

#include <string>

#include "measure/retime.hpp"

namespace ktune::tuner {

std::vector<measure::CandidateResult> CandidateMeasurer::measure_many(
    std::vector<measure::CandidateRequest> requests) {
  std::vector<measure::CandidateResult> out;
  out.reserve(requests.size());
  for (const auto& r : requests) out.push_back(measure(r));
  return out;
}

RunnerMeasurer::RunnerMeasurer(int device, const std::atomic<bool>* stop) {
  measure::RunnerOptions options;
  options.stop = stop;
  options.worker_command = measure::default_worker_command();
  options.worker_command.insert(options.worker_command.end(), {"--device", std::to_string(device)});
  runner_ = std::make_unique<measure::CandidateRunner>(options);
}

RunnerMeasurer::~RunnerMeasurer() { runner_->shutdown(); }

measure::CandidateResult RunnerMeasurer::measure(const measure::CandidateRequest& request) {
  return runner_->run(request);
}

std::vector<measure::CandidateResult> RunnerMeasurer::retime(std::vector<measure::CandidateRequest> requests,
                                                             int rounds) {
  return measure::retime_interleaved(*runner_, std::move(requests), rounds);
}

}  // namespace ktune::tuner
