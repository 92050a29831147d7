// GPU smoke test (label gpu): NVRTC -> cuModuleLoadData -> cuLaunchKernel through ktune's driver
// layer on random input, every element checked against a CPU computation. Skips with the driver's
// own reason when there is no usable GPU; never passes without running the kernel.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "harness/context.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "harness/module.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "ktune/error.hpp"

namespace ktune::harness {
namespace {

/// Skips the test with the loader's reason when there is no usable device.
#define KTUNE_REQUIRE_GPU()                                 \
  do {                                                      \
    try {                                                   \
      if (device_count() > 0) break;                        \
    } catch (const ::ktune::Error& e) {                     \
      if (e.kind() != ::ktune::ErrorKind::kNoDevice) throw; \
      GTEST_SKIP() << "no usable GPU: " << e.what();        \
    }                                                       \
  } while (0)

constexpr const char* kSource = R"(
template <typename T>
__global__ void fma_square(T* out, const T* x, const T* y, T a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i] * y[i];
}
)";

TEST(GpuSmoke, QueryDeviceIsSane) {
  KTUNE_REQUIRE_GPU();
  const int count = device_count();
  const DeviceInfo d = query_device(0);
  std::printf("%s\n", to_json(d).dump(2).c_str());
  EXPECT_FALSE(d.name.empty());
  EXPECT_GE(d.cc_major, 5);
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.memory_bytes, int64_t{1} << 30);
  EXPECT_GT(d.l2_bytes, 0);
  EXPECT_EQ(d.warp_size, 32);
  EXPECT_GE(d.smem_per_block_optin, 48 * 1024);  // every GPU since Volta opts in past 48 KiB
  EXPECT_GE(d.max_threads_per_block, 1024);
  EXPECT_GT(d.max_regs_per_block, 0);
  EXPECT_GT(d.sm_clock_khz, 0);
  EXPECT_GE(d.driver_version, 12000);
  EXPECT_EQ(d.uuid.rfind("GPU-", 0), 0u) << d.uuid;
  EXPECT_EQ(d.uuid.size(), 40u) << d.uuid;
  EXPECT_FALSE(d.pci_bus_id.empty());
  try {
    query_device(count);
    FAIL() << "query_device(" << count << ") did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find(std::to_string(count)), std::string::npos) << e.what();
  }
}

TEST(GpuSmoke, CompileLoadLaunchAndVerifyEveryElement) {
  KTUNE_REQUIRE_GPU();
  const DeviceInfo info = query_device(0);
  PrimaryContext context(0);

  NvrtcCompiler compiler;
  CompileRequest request;
  request.source = kSource;
  request.program_name = "fma_square.cu";
  request.name_expressions = {"fma_square<float>"};
  request.arch = info.arch();
  const CompileResult compiled = compiler.compile(request);
  std::printf("compiled for %s in %.1f ms, cubin %zu bytes\n", info.arch().c_str(), compiled.compile_ms,
              compiled.cubin.size());
  const Module module = Module::load(compiled.cubin);
  CUfunction kernel = module.function(compiled.lowered_names.at("fma_square<float>"));

  constexpr int n = (1 << 20) + 37;  // not a multiple of the block: exercises the bounds check
  std::mt19937 rng(20261129);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = dist(rng);
    y[i] = dist(rng);
  }
  float a = dist(rng);

  DeviceBuffer dx = DeviceBuffer::from_host<float>(x);
  DeviceBuffer dy = DeviceBuffer::from_host<float>(y);
  DeviceBuffer dout(sizeof(float) * n);
  dout.fill_u32(0x7fc00000u);  // poison with NaN: an element the kernel misses cannot pass
  int count = n;
  void* args[] = {dout.arg(), dx.arg(), dy.arg(), &a, &count};
  constexpr unsigned kBlock = 256;
  launch(kernel, Dim3{(n + kBlock - 1) / kBlock}, Dim3{kBlock}, 0, nullptr, args);
  context.synchronize();
  const std::vector<float> out = dout.download_as<float>(n);

  int bad = 0;
  for (int i = 0; i < n; ++i) {
    const double expect = static_cast<double>(a) * x[i] + static_cast<double>(y[i]) * y[i];
    // float math with one rounding per operation (possibly fused): a few ulps of values up to ~8
    if (!(std::fabs(out[i] - expect) <= 1e-5 * (1.0 + std::fabs(expect)))) {
      if (++bad <= 5) ADD_FAILURE() << "element " << i << ": got " << out[i] << ", expected " << expect;
    }
  }
  EXPECT_EQ(bad, 0) << "of " << n << " elements";
}

}  // namespace
}  // namespace ktune::harness
