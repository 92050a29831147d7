#include "measure/kernel_timer.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"
#include "measure/l2_flush.hpp"
#include "measure/steady_clock.hpp"
#include "measure/timer.hpp"

namespace ktune::measure {
uint64_t free_device_bytes() {
  std::size_t free = 0, total = 0;
  KTUNE_CU_CHECK(harness::driver().cuMemGetInfo(&free, &total));
  return free;
}

KernelTimer::KernelTimer(const TimingOptions& options, FlushPlan plan, int64_t l2_bytes, CUstream stream,
                         const UtilityKernels* utility)
    : options_(options), plan_(std::move(plan)), stream_(stream) {
  if (plan_.mode == FlushMode::kL2)
    flusher_ = std::make_unique<L2Flusher>(l2_bytes, options_.l2_flush_factor);
  if (plan_.mode == FlushMode::kL2Clean)
    flusher_ = std::make_unique<L2Flusher>(l2_bytes, options_.l2_flush_factor, utility);
}

KernelTimer::~KernelTimer() = default;

void KernelTimer::flush() {
  if (flusher_) flusher_->flush(stream_);
}

double KernelTimer::warm_up(const std::function<void(std::size_t)>& launch) {
  EventTimer timer(stream_);
  std::vector<double> warm;
  const double start = now_ms();
  while (static_cast<int>(warm.size()) < options_.warmup_min_launches ||
         now_ms() - start < options_.warmup_min_ms) {
    flush();
    const std::size_t set = next_set_++ % static_cast<std::size_t>(plan_.sets);
    warm.push_back(timer.time_us([&] { launch(set); }));
  }
  // Median of the second half: the first launches include module load and clock ramp-up.
  return summarize(std::span<const double>(warm).subspan(warm.size() / 2)).median;
}

TimingResult KernelTimer::time(const std::function<void(std::size_t)>& launch) {
  TimingResult out;
  out.estimate_us = warm_up(launch);
  std::unique_ptr<GraphBatch> batch;
  if (out.estimate_us < options_.graph_batch_threshold_us) {
    const int n = std::clamp(
        static_cast<int>(std::lround(options_.graph_batch_target_us / std::max(out.estimate_us, 0.1))), 2,
        options_.graph_batch_max_launches);
    const auto sets = static_cast<std::size_t>(plan_.sets);
    batch =
        std::make_unique<GraphBatch>(stream_, n, [&](int i) { launch(static_cast<std::size_t>(i) % sets); });
    batch->launch();  // the graph's own first run is not a sample
    KTUNE_CU_CHECK(harness::driver().cuStreamSynchronize(stream_));
  }
  out.launches_per_sample = batch ? batch->launches() : 1;

  EventTimer timer(stream_);
  StoppingRule rule(options_);
  const double t0 = now_ms();
  while (out.stop == StopReason::kContinue) {
    flush();
    if (batch) {
      rule.add(timer.time_us([&] { batch->launch(); }) / batch->launches());
    } else {
      const std::size_t set = next_set_++ % static_cast<std::size_t>(plan_.sets);
      rule.add(timer.time_us([&] { launch(set); }));
    }
    out.stop = rule.check(now_ms() - t0);
  }
  out.samples_us = rule.samples();
  out.stats = rule.stats();
  out.drift = rule.drift();
  return out;
}

}  // namespace ktune::measure
