#include "measure/buffer_guard.hpp"

#include <vector>

#include <fmt/format.h>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"
#include "measure/candidate_launch.hpp"

namespace ktune::measure {

void write_guards(const BufferSet& set, CUstream stream) {
  for (const auto& [name, buf] : set.buffers) {
    KTUNE_CU_CHECK(harness::driver().cuMemsetD8Async(buf.get(), kGuardByte, kGuardBytes, stream));
    KTUNE_CU_CHECK(harness::driver().cuMemsetD8Async(buf.get() + buf.size() - kGuardBytes, kGuardByte,
                                                     kGuardBytes, stream));
  }
}

std::optional<std::string> check_guards(const BufferSet& set, CUstream stream) {
  KTUNE_CU_CHECK(harness::driver().cuStreamSynchronize(stream));
  std::vector<uint8_t> host(kGuardBytes);
  for (const auto& [name, buf] : set.buffers) {
    for (const bool after : {true, false}) {
      const CUdeviceptr at = after ? buf.get() + buf.size() - kGuardBytes : buf.get();
      KTUNE_CU_CHECK(harness::driver().cuMemcpyDtoH(host.data(), at, kGuardBytes));
      int changed = 0;
      for (uint8_t b : host) changed += b != kGuardByte ? 1 : 0;
      if (changed > 0) {
        return fmt::format("a write {} buffer '{}' ({} of {} guard bytes changed)",
                           after ? "past the end of" : "before the start of", name, changed, kGuardBytes);
      }
    }
  }
  return std::nullopt;
}

}  // namespace ktune::measure
