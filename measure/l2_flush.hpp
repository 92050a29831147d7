#pragma once
/// Evicts the previous sample's data from L2 before the next one (docs/design.md "Timing protocol"):
/// a memset of a scratch buffer of `factor` x the L2 size, issued on the timing stream just before
/// the start event, so it is never inside the timed interval. (nvbench's l2flush.cuh does the same
/// with 1x the L2 size.)

#include <cuda.h>

#include <cstdint>

#include "harness/device_buffer.hpp"

namespace ktune::harness {

class L2Flusher {
 public:
  /// Allocates factor * l2_bytes (rounded up to 4 bytes; at least 4 MiB when the L2 size is unknown).
  L2Flusher(int64_t l2_bytes, double factor);
  /// Writes the whole scratch buffer on `stream` (asynchronous); a new value each call.
  void flush(CUstream stream);
  std::size_t bytes() const { return buffer_.size(); }

 private:
  DeviceBuffer buffer_;
  uint32_t value_ = 0;
};

}  // namespace ktune::harness
