#include "measure/gpu_compare.hpp"

#include <algorithm>
#include <vector>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/driver_api.hpp"

namespace ktune::measure {

ErrorMetrics gpu_compare(const UtilityKernels& kernels, CUdeviceptr out, CUdeviceptr ref, DType dtype,
                         uint64_t count, CUstream stream) {
  return gpu_compare(kernels, out, dtype, ref, dtype, count, stream);
}

namespace {

/// Runs compare kernel `function` over `count` elements and merges its per-block sums.
ErrorMetrics run_compare(CUfunction function, CUdeviceptr out, CUdeviceptr ref, uint64_t count,
                         CUstream stream) {
  // 1024 blocks: enough to fill the GPU, few enough partials to merge on the host in microseconds.
  const auto blocks =
      static_cast<unsigned>(std::clamp<uint64_t>((count + kCompareBlock - 1) / kCompareBlock, 1, 1024));
  harness::DeviceBuffer sums(sizeof(double) * 4 * blocks);
  harness::DeviceBuffer counts(sizeof(unsigned long long) * 2 * blocks);
  unsigned long long n = count;
  CUdeviceptr s = sums.get();
  CUdeviceptr c = counts.get();
  void* args[] = {&out, &ref, &n, &s, &c};
  KTUNE_CU_CHECK(harness::driver().cuLaunchKernel(function, blocks, 1, 1, kCompareBlock, 1, 1, 0, stream,
                                                  args, nullptr));
  KTUNE_CU_CHECK(harness::driver().cuStreamSynchronize(stream));
  const auto hs = sums.download_as<double>(4 * blocks);
  const auto hc = counts.download_as<unsigned long long>(2 * blocks);
  ErrorSums total;
  for (unsigned b = 0; b < blocks; ++b) {
    ErrorSums part;
    part.sum_sq_diff = hs[4 * b];
    part.sum_sq_ref = hs[4 * b + 1];
    part.max_abs_diff = hs[4 * b + 2];
    part.max_abs_ref = hs[4 * b + 3];
    part.nonfinite_out = hc[2 * b];
    part.nonfinite_ref = hc[2 * b + 1];
    total.merge(part);
  }
  total.count = count;
  return finish(total);
}

}  // namespace

ErrorMetrics gpu_compare(const UtilityKernels& kernels, CUdeviceptr out, DType dtype, CUdeviceptr ref,
                         DType ref_dtype, uint64_t count, CUstream stream) {
  return run_compare(kernels.compare(dtype, ref_dtype), out, ref, count, stream);
}

ErrorMetrics gpu_compare(const UtilityKernels& kernels, CUdeviceptr out, CUdeviceptr ref, IntType type,
                         uint64_t count, CUstream stream) {
  return run_compare(kernels.compare(type), out, ref, count, stream);
}

}  // namespace ktune::measure
