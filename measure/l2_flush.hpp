#pragma once
/// Evicts the previous sample's data from L2 before the next one (docs/measurement.md): a memset of
/// a scratch buffer of `factor` x the L2 size, issued on the timing stream just before the start
/// event, so it is never inside the timed interval (nvbench's l2flush.cuh does the same with 1x the
/// L2 size). The memset leaves the L2 full of dirty lines that the timed kernel then writes back;
/// the clean variant follows it with a read of a second such buffer, so only clean lines remain.

#include <cuda.h>

#include <cstdint>

#include "harness/device_buffer.hpp"

namespace ktune::measure {

class UtilityKernels;

class L2Flusher {
 public:
  /// Allocates factor * l2_bytes (rounded up to 16 bytes; 64 MiB when the L2 size is unknown). With
  /// `clean_reader` (whose read kernel the clean variant runs), a second buffer as large.
  L2Flusher(int64_t l2_bytes, double factor, const UtilityKernels* clean_reader = nullptr);
  /// Writes the whole scratch buffer on `stream` (asynchronous; a new value each call), then in the
  /// clean variant reads the second one.
  void flush(CUstream stream);
  std::size_t bytes() const { return written_.size(); }
  bool clean() const { return reader_ != nullptr; }

 private:
  harness::DeviceBuffer written_;
  harness::DeviceBuffer read_;
  harness::DeviceBuffer sink_;
  const UtilityKernels* reader_ = nullptr;
  uint32_t value_ = 0;
};

}  // namespace ktune::measure
