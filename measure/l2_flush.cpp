#include "measure/l2_flush.hpp"

#include <algorithm>
#include <cmath>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"

namespace ktune::harness {

namespace {
std::size_t flush_bytes(int64_t l2_bytes, double factor) {
  constexpr double kFallback = 4.0 * 1024 * 1024;  // when the driver reports no L2 size
  const double want = l2_bytes > 0 ? factor * static_cast<double>(l2_bytes) : kFallback;
  return (static_cast<std::size_t>(std::ceil(want)) + 3) & ~std::size_t{3};
}
}  // namespace

L2Flusher::L2Flusher(int64_t l2_bytes, double factor) : buffer_(flush_bytes(l2_bytes, factor)) {}

void L2Flusher::flush(CUstream stream) {
  ++value_;
  KTUNE_CU_CHECK(driver().cuMemsetD32Async(buffer_.get(), value_, buffer_.size() / 4, stream));
}

}  // namespace ktune::harness
