#include "measure/random_fill.hpp"

#include <algorithm>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"

namespace ktune::harness {

void random_fill(const UtilityKernels& kernels, CUdeviceptr ptr, DType dtype, uint64_t count, uint64_t seed,
                 float scale, CUstream stream) {
  if (count == 0) return;
  constexpr unsigned kBlock = 256;
  // Grid-stride loop; 64K blocks saturate any current GPU (132 SMs x 8 blocks x 60 waves).
  const auto blocks = static_cast<unsigned>(std::min<uint64_t>((count + kBlock - 1) / kBlock, 65536));
  unsigned long long n = count;
  unsigned long long s = seed;
  void* args[] = {&ptr, &n, &s, &scale};
  KTUNE_CU_CHECK(
      driver().cuLaunchKernel(kernels.fill(dtype), blocks, 1, 1, kBlock, 1, 1, 0, stream, args, nullptr));
}

}  // namespace ktune::harness
