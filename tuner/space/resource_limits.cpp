#include "tuner/space/resource_limits.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::tuner {
namespace {

/// Register allocation unit per warp (sm_50 .. sm_90, CUDA occupancy calculator).
constexpr int64_t kRegisterUnitPerWarp = 256;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t registers_per_block(const Resources& r, const DeviceLimits& limits) {
  const int64_t warps = ceil_div(r.threads_per_block, limits.warp_size);
  const int64_t per_warp =
      ceil_div(r.registers_per_thread * limits.warp_size, kRegisterUnitPerWarp) * kRegisterUnitPerWarp;
  return warps * per_warp;
}

std::optional<std::string> exceeds_limits(const Resources& r, const DeviceLimits& limits) {
  if (r.threads_per_block > limits.max_threads_per_block) {
    return fmt::format("{} threads per block > device limit {}", r.threads_per_block,
                       limits.max_threads_per_block);
  }
  if (r.max_threads_for_function > 0 && r.threads_per_block > r.max_threads_for_function) {
    return fmt::format("{} threads per block > {} this kernel can launch with (registers: {} a thread)",
                       r.threads_per_block, r.max_threads_for_function, r.registers_per_thread);
  }
  if (r.registers_per_thread > limits.max_regs_per_thread) {
    return fmt::format("{} registers a thread > limit {}", r.registers_per_thread,
                       limits.max_regs_per_thread);
  }
  const int64_t regs = registers_per_block(r, limits);
  if (regs > limits.max_regs_per_block) {
    return fmt::format("{} registers a thread x {} threads = {} registers per block (allocated) > limit {}",
                       r.registers_per_thread, r.threads_per_block, regs, limits.max_regs_per_block);
  }
  const int64_t smem = r.static_smem_bytes + r.dynamic_smem_bytes;
  if (smem > limits.max_smem_per_block) {
    return fmt::format("{} B shared memory per block ({} static + {} dynamic) > limit {} B", smem,
                       r.static_smem_bytes, r.dynamic_smem_bytes, limits.max_smem_per_block);
  }
  return std::nullopt;
}

int64_t footprint_bytes(const Resources& r, const DeviceLimits& limits) {
  return registers_per_block(r, limits) * 4 + r.static_smem_bytes + r.dynamic_smem_bytes;
}

size_t pick_winner(std::span<const Contender> contenders, const DeviceLimits& limits, double relative_noise) {
  if (contenders.empty()) throw Error(ErrorKind::kBadInput, "pick_winner needs at least one contender");
  double fastest = contenders[0].median_us;
  for (const auto& c : contenders) fastest = std::min(fastest, c.median_us);
  const double cutoff = fastest * (1.0 + relative_noise);
  size_t best = contenders.size();
  for (size_t i = 0; i < contenders.size(); ++i) {
    const auto& c = contenders[i];
    if (c.median_us > cutoff) continue;
    if (best == contenders.size() ||
        std::make_tuple(footprint_bytes(c.resources, limits), c.preference, std::string_view(c.name)) <
            std::make_tuple(footprint_bytes(contenders[best].resources, limits), contenders[best].preference,
                            std::string_view(contenders[best].name))) {
      best = i;
    }
  }
  return best;
}

}  // namespace ktune::tuner
