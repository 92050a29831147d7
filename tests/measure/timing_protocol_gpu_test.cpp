// gpu: the default timing protocol (measure/kernel_timer.hpp: rotated inputs, CUDA-graph batches
// below 1 ms) against an independent clock, CUPTI Activity records of the same launches (the GPU's
// own start and end of each kernel). For a memory-bound and a compute-bound kernel the graph-batched
// time a launch must be within 2 % of the activity durations' mean; for a launch-bound kernel (a
// few us) the test prints the per-launch gap between the two for the record (docs/perf/measurement.md)
// and checks only that the batches run the kernel back to back (|gap| < 3 us a launch). Tolerances,
// never speeds.
#include <gtest/gtest.h>

#include "gpu_availability.hpp"

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "harness/context.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "harness/driver_api.hpp"
#include "harness/module.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "ktune/error.hpp"
#include "measure/cupti_activity.hpp"
#include "measure/kernel_timer.hpp"
#include "measure/timer.hpp"

namespace ktune::measure {
namespace {

const char* const kSource = R"(
extern "C" __global__ void protocol_copy(const float4* src, float4* dst, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += static_cast<unsigned long long>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}
// Eight independent FMA chains a thread: bound by the FMA pipes, no memory traffic but one store.
extern "C" __global__ void protocol_fma(float* out, int iters) {
  float a[8];
  for (int j = 0; j < 8; ++j) a[j] = threadIdx.x + j;
  for (int i = 0; i < iters; ++i)
    for (int j = 0; j < 8; ++j) a[j] = a[j] * 0.999f + 0.5f;
  float s = 0;
  for (int j = 0; j < 8; ++j) s += a[j];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
)";

using test::no_gpu_reason;

struct Protocol : ::testing::Test {
  void SetUp() override {
    const std::string why = no_gpu_reason();
    if (!why.empty()) GTEST_SKIP() << "no usable GPU: " << why;
    context = std::make_unique<harness::PrimaryContext>(0);
    device = harness::query_device(0);
    KTUNE_CU_CHECK(harness::driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    harness::CompileRequest req;
    req.source = kSource;
    req.program_name = "protocol.cu";
    req.name_expressions = {"protocol_copy", "protocol_fma"};
    req.arch = device.arch();
    harness::NvrtcCompiler compiler;
    const harness::CompileResult res = compiler.compile(req);
    module = harness::Module::load(res.cubin);
    copy = module.function(res.lowered_names.at("protocol_copy"));
    fma = module.function(res.lowered_names.at("protocol_fma"));
    copy_name = res.lowered_names.at("protocol_copy");
    fma_name = res.lowered_names.at("protocol_fma");
  }
  void TearDown() override {
    if (stream != nullptr) harness::driver().cuStreamDestroy(stream);
  }

  /// Times `launch(set)` with the default protocol, then replays the same batch (same launch count,
  /// same rotation) under CUPTI Activity; returns {event time a launch, activity mean a launch}.
  std::pair<double, double> both_clocks(const FlushPlan& plan, const std::function<void(std::size_t)>& launch,
                                        const std::string& function, int* launches_per_sample) {
    const TimingOptions t;
    KernelTimer timer(t, plan, device.l2_bytes, stream);
    const TimingResult r = timer.time(launch);
    *launches_per_sample = r.launches_per_sample;
    EXPECT_GT(r.launches_per_sample, 1) << "the default threshold (1 ms) batches this kernel";
    const int n = r.launches_per_sample;
    const auto sets = static_cast<std::size_t>(plan.sets);
    GraphBatch batch(stream, n, [&](int i) { launch(static_cast<std::size_t>(i) % sets); });
    batch.launch();
    KTUNE_CU_CHECK(harness::driver().cuStreamSynchronize(stream));
    std::string why;
    auto activity = ActivityTimer::start(&why);
    if (!activity) {
      ADD_FAILURE() << "CUPTI Activity unavailable: " << why;
      return {r.stats.median, 0};
    }
    constexpr int kBatches = 10;
    for (int b = 0; b < kBatches; ++b) batch.launch();
    KTUNE_CU_CHECK(harness::driver().cuStreamSynchronize(stream));
    const std::vector<double> us = activity->stop(function, static_cast<std::size_t>(kBatches * n));
    EXPECT_EQ(us.size(), static_cast<std::size_t>(kBatches * n));
    double sum = 0;
    for (double u : us) sum += u;
    return {r.stats.median, us.empty() ? 0 : sum / static_cast<double>(us.size())};
  }

  /// A copy of `bytes` (a multiple of 16) rotated over the sets the default protocol plans.
  std::pair<double, double> copy_clocks(uint64_t bytes, int* batch) {
    const FlushPlan plan = plan_flush(TimingOptions{}, device.l2_bytes, 2 * bytes, free_device_bytes());
    std::vector<harness::DeviceBuffer> src, dst;
    for (int s = 0; s < plan.sets; ++s) {
      src.emplace_back(bytes);
      dst.emplace_back(bytes);
      src.back().fill_u8(static_cast<unsigned char>(s + 1));
    }
    KTUNE_CU_CHECK(harness::driver().cuCtxSynchronize());
    unsigned long long n = bytes / 16;
    const unsigned blocks = static_cast<unsigned>(std::min<unsigned long long>((n + 255) / 256, 132 * 16));
    return both_clocks(
        plan,
        [&](std::size_t s) {
          CUdeviceptr a = src[s].get(), b = dst[s].get();
          void* args[] = {&a, &b, &n};
          harness::launch(copy, {blocks, 1, 1}, {256, 1, 1}, 0, stream, args);
        },
        copy_name, batch);
  }

  std::unique_ptr<harness::PrimaryContext> context;
  harness::DeviceInfo device;
  CUstream stream = nullptr;
  harness::Module module;
  CUfunction copy = nullptr, fma = nullptr;
  std::string copy_name, fma_name;
};

void report(const char* what, double event_us, double activity_us, int batch) {
  std::printf(
      "[protocol] %s: graph-batched %.3f us a launch (batches of %d), CUPTI activity %.3f us, gap %.3f us "
      "(%.2f %%)\n",
      what, event_us, batch, activity_us, event_us - activity_us,
      100.0 * (event_us - activity_us) / activity_us);
  ::testing::Test::RecordProperty(std::string(what) + "_event_us", std::to_string(event_us));
  ::testing::Test::RecordProperty(std::string(what) + "_activity_us", std::to_string(activity_us));
}

TEST_F(Protocol, MemoryBoundCopyAgreesWithActivityWithin2Percent) {
  int batch = 0;
  const auto [event_us, activity_us] = copy_clocks(256ull << 20, &batch);  // 512 MB moved a launch
  report("copy_256MiB", event_us, activity_us, batch);
  ASSERT_GT(activity_us, 0);
  EXPECT_NEAR(event_us / activity_us, 1.0, 0.02);
}

TEST_F(Protocol, ComputeBoundFmaAgreesWithActivityWithin2Percent) {
  harness::DeviceBuffer out(static_cast<std::size_t>(device.sm_count) * 8 * 256 * sizeof(float));
  int iters = 4096;
  const unsigned blocks = static_cast<unsigned>(device.sm_count * 8);
  int batch = 0;
  FlushPlan none;
  none.mode = FlushMode::kNone;  // no inputs: nothing to keep cold
  const auto [event_us, activity_us] = both_clocks(
      none,
      [&](std::size_t) {
        CUdeviceptr o = out.get();
        void* args[] = {&o, &iters};
        harness::launch(fma, {blocks, 1, 1}, {256, 1, 1}, 0, stream, args);
      },
      fma_name, &batch);
  report("fma_8x4096", event_us, activity_us, batch);
  ASSERT_GT(activity_us, 0);
  EXPECT_NEAR(event_us / activity_us, 1.0, 0.02);
}

TEST_F(Protocol, LaunchBoundCopyGapIsReported) {
  int batch = 0;
  const auto [event_us, activity_us] = copy_clocks(64ull << 10, &batch);  // 128 KB moved a launch
  report("copy_64KiB", event_us, activity_us, batch);
  ASSERT_GT(activity_us, 0);
  // Back to back in a graph the launches' ramp-up and tail overlap (Activity may exceed the event
  // time a launch: 3.97 against 2.56 us on the H200, docs/perf/measurement.md); either way the gap
  // is far below an eager launch's host cost (~4.3 us).
  EXPECT_LT(std::abs(event_us - activity_us), 3.0);
}

}  // namespace
}  // namespace ktune::measure
