#pragma once
/// How a measurement keeps L2 from serving the previous sample's data (docs/measurement.md): the
/// requested flush mode, or an L2 flush when rotation's buffer sets do not fit in free memory. Pure
/// arithmetic, no CUDA: the timer (kernel_timer.hpp) and its callers allocate what it says.

#include <cstdint>
#include <string>

#include "measure/timing_options.hpp"

namespace ktune::measure {

/// How the samples of one measurement keep L2 from serving the previous sample's data.
struct FlushPlan {
  FlushMode mode = FlushMode::kL2;  ///< the mode used: the requested one, or kL2 when rotation did not fit
  int sets = 1;                     ///< buffer sets to rotate over (1 unless mode is kRotate)
  std::string note;                 ///< why the requested mode was not used ("" when it was)

  /// "rotate", "l2", ... with the note when there is one: what is recorded with the measurement.
  std::string describe() const;
};

/// The flush plan for work whose buffers take `set_bytes` (one set), with `free_bytes` of device
/// memory free: rotation takes clamp(ceil(factor * L2 / set_bytes) + 1, 2, rotate_max_sets) sets,
/// unless the extra sets would take more than 80 % of the free memory.
FlushPlan plan_flush(const TimingOptions& options, int64_t l2_bytes, uint64_t set_bytes, uint64_t free_bytes);

}  // namespace ktune::measure
