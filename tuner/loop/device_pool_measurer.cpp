#include "tuner/loop/device_pool_measurer.hpp"

#include <exception>
#include <thread>

#include "ktune/error.hpp"
#include "tuner/loop/progress.hpp"

namespace ktune::tuner {

DevicePoolMeasurer::DevicePoolMeasurer(std::vector<int> devices, const std::atomic<bool>* stop,
                                       Progress* progress)
    : devices_(std::move(devices)), progress_(progress) {
  if (devices_.empty()) throw Error(ErrorKind::kBadInput, "a device pool needs at least one device");
  for (int d : devices_) workers_.push_back(std::make_unique<RunnerMeasurer>(d, stop));
  measured_.assign(workers_.size(), 0);
}

void DevicePoolMeasurer::show(std::size_t worker, bool busy) {
  // Workers that share an ordinal (tests only) show as one device.
  if (progress_ != nullptr) progress_->device_status(devices_[worker], busy, measured_[worker]);
}

DevicePoolMeasurer::~DevicePoolMeasurer() = default;

measure::CandidateResult DevicePoolMeasurer::measure(const measure::CandidateRequest& request) {
  measure::CandidateRequest r = request;
  r.device = devices_.front();
  return workers_.front()->measure(r);
}

std::vector<measure::CandidateResult> DevicePoolMeasurer::measure_many(
    std::vector<measure::CandidateRequest> requests) {
  std::vector<measure::CandidateResult> out(requests.size());
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> failures(workers_.size());
  const auto work = [&](std::size_t w) {
    try {
      for (std::size_t i = next++; i < requests.size(); i = next++) {
        requests[i].device = devices_[w];
        show(w, true);
        out[i] = workers_[w]->measure(requests[i]);
        ++measured_[w];
        show(w, false);
      }
    } catch (...) {
      failures[w] = std::current_exception();
    }
  };
  const std::size_t threads = std::min(workers_.size(), requests.size());
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < threads; ++w) pool.emplace_back(work, w);
  if (threads > 0) work(0);
  for (auto& t : pool) t.join();
  for (const auto& f : failures)
    if (f) std::rethrow_exception(f);
  return out;
}

std::vector<measure::CandidateResult> DevicePoolMeasurer::retime(
    std::vector<measure::CandidateRequest> requests, int rounds) {
  for (auto& r : requests) r.device = devices_.front();
  return workers_.front()->retime(std::move(requests), rounds);
}

}  // namespace ktune::tuner
