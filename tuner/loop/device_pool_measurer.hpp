#pragma once
/// Candidates of one key measured in parallel on several identical GPUs (`ktune tune --devices`):
/// one worker process per entry of `devices`, each taking the next candidate as it frees. The
/// re-time of the contenders runs on the first device only, interleaved, so the winner never
/// depends on which card measured it. An ordinal may appear more than once only in tests (workers
/// then share a GPU and disturb each other's timing: never for real measurements).

#include <atomic>
#include <memory>
#include <vector>

#include "tuner/loop/candidate_measurer.hpp"

namespace ktune::tuner {

class Progress;

class DevicePoolMeasurer final : public CandidateMeasurer {
 public:
  /// One worker process a device entry. `devices` must not be empty. `progress` (may be null)
  /// shows each device's live status.
  DevicePoolMeasurer(std::vector<int> devices, const std::atomic<bool>* stop, Progress* progress = nullptr);
  ~DevicePoolMeasurer() override;
  /// On the first device.
  measure::CandidateResult measure(const measure::CandidateRequest& request) override;
  /// One thread a worker, each measuring the next request not taken yet on its own device.
  std::vector<measure::CandidateResult> measure_many(
      std::vector<measure::CandidateRequest> requests) override;
  /// On the first device.
  std::vector<measure::CandidateResult> retime(std::vector<measure::CandidateRequest> requests,
                                               int rounds) override;
  std::size_t parallelism() const override { return workers_.size(); }

 private:
  void show(std::size_t worker, bool busy);

  std::vector<int> devices_;
  std::vector<std::unique_ptr<RunnerMeasurer>> workers_;
  Progress* progress_;
  std::vector<std::size_t> measured_;  ///< candidates each worker measured (measure_many)
};

}  // namespace ktune::tuner
