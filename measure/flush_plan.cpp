#include "measure/flush_plan.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ktune::measure {
namespace {

/// Rotation's extra sets may take at most this share of the free memory.
constexpr double kRotateMemoryShare = 0.8;

}  // namespace

std::string FlushPlan::describe() const {
  std::string out(to_string(mode));
  if (!note.empty()) out += " (" + note + ")";
  return out;
}

FlushPlan plan_flush(const TimingOptions& options, int64_t l2_bytes, uint64_t set_bytes,
                     uint64_t free_bytes) {
  FlushPlan plan;
  plan.mode = options.flush;
  if (options.flush != FlushMode::kRotate) return plan;
  const double l2 = static_cast<double>(std::max<int64_t>(l2_bytes, 1));
  const double per_set = static_cast<double>(std::max<uint64_t>(set_bytes, 1));
  plan.sets = std::clamp(static_cast<int>(std::ceil(options.l2_flush_factor * l2 / per_set)) + 1, 2,
                         std::max(2, options.rotate_max_sets));
  const double extra = static_cast<double>(plan.sets - 1) * per_set;
  if (extra > kRotateMemoryShare * static_cast<double>(free_bytes)) {
    plan.note =
        fmt::format("rotation needs {} more buffer sets of {:.1f} MB, {:.1f} GB free: flushed L2 instead",
                    plan.sets - 1, per_set / 1e6, static_cast<double>(free_bytes) / 1e9);
    plan.mode = FlushMode::kL2;
    plan.sets = 1;
  }
  return plan;
}

}  // namespace ktune::measure
