#include "measure/l2_flush.hpp"

#include <algorithm>
#include <cmath>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"
#include "harness/module.hpp"
#include "measure/utility_kernels.hpp"

namespace ktune::measure {

namespace {
std::size_t flush_bytes(int64_t l2_bytes, double factor) {
  constexpr double kFallback = 64.0 * 1024 * 1024;  // when the driver reports no L2 size
  const double want = l2_bytes > 0 ? factor * static_cast<double>(l2_bytes) : kFallback;
  return (static_cast<std::size_t>(std::ceil(want)) + 15) & ~std::size_t{15};
}
}  // namespace

L2Flusher::L2Flusher(int64_t l2_bytes, double factor, const UtilityKernels* clean_reader)
    : written_(flush_bytes(l2_bytes, factor)), reader_(clean_reader) {
  if (reader_ == nullptr) return;
  read_ = harness::DeviceBuffer(flush_bytes(l2_bytes, factor));
  read_.fill_u8(0x5A);  // equal words: the read kernel never writes its sink
  sink_ = harness::DeviceBuffer(16);
  KTUNE_CU_CHECK(harness::driver().cuCtxSynchronize());  // fill_u8 ran on the legacy default stream
}

void L2Flusher::flush(CUstream stream) {
  ++value_;
  KTUNE_CU_CHECK(harness::driver().cuMemsetD32Async(written_.get(), value_, written_.size() / 4, stream));
  if (reader_ == nullptr) return;
  CUdeviceptr p = read_.get();
  unsigned long long n = read_.size() / 16;
  CUdeviceptr sink = sink_.get();
  void* args[] = {&p, &n, &sink};
  harness::launch(reader_->read_all(), {kReadAllBlocks, 1, 1}, {kReadAllBlock, 1, 1}, 0, stream, args);
}

}  // namespace ktune::measure
