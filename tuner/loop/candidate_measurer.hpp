#pragma once
/// What the tuning loop asks of the GPU side: measure one candidate, and re-time the best few
/// interleaved before a winner is named. The real one goes through the measurement harness's
/// worker process (measure::CandidateRunner, D5); tests inject a fake so the loop runs without a
/// GPU.

#include <atomic>
#include <memory>
#include <vector>

#include "measure/candidate.hpp"
#include "measure/candidate_runner.hpp"

namespace ktune::tuner {

class CandidateMeasurer {
 public:
  virtual ~CandidateMeasurer() = default;
  /// One candidate; always returns a result (failures are outcomes). May throw ktune::Error
  /// (kNoDevice) when no worker can start at all.
  virtual measure::CandidateResult measure(const measure::CandidateRequest& request) = 0;
  /// Several candidates, in any order or at once; one result per request, in the order given. The
  /// default measures them one after the other.
  virtual std::vector<measure::CandidateResult> measure_many(std::vector<measure::CandidateRequest> requests);
  /// How many candidates measure_many runs at once (the tuning loop gathers that many): 1 here.
  virtual std::size_t parallelism() const { return 1; }
  /// The candidates re-timed interleaved; one result per candidate, in the order given.
  virtual std::vector<measure::CandidateResult> retime(std::vector<measure::CandidateRequest> requests,
                                                       int rounds) = 0;
};

/// The measurer over worker processes: `ktune worker --device N` (measure::default_worker_command).
class RunnerMeasurer final : public CandidateMeasurer {
 public:
  /// @param stop a stop request passed to the runner (measure::RunnerOptions::stop); may be null
  explicit RunnerMeasurer(int device, const std::atomic<bool>* stop = nullptr);
  ~RunnerMeasurer() override;
  measure::CandidateResult measure(const measure::CandidateRequest& request) override;
  std::vector<measure::CandidateResult> retime(std::vector<measure::CandidateRequest> requests,
                                               int rounds) override;
  measure::CandidateRunner& runner() { return *runner_; }

 private:
  std::unique_ptr<measure::CandidateRunner> runner_;
};

}  // namespace ktune::tuner
