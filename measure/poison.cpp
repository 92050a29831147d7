#include "measure/poison.hpp"

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"

namespace ktune::measure {

void poison(CUdeviceptr ptr, uint64_t bytes, CUstream stream, uint8_t byte) {
  KTUNE_CU_CHECK(harness::driver().cuMemsetD8Async(ptr, byte, bytes, stream));
}

}  // namespace ktune::measure
