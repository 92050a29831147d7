// GPU tests of the measurement harness, run through the real `ktune worker` (docs/design.md D4, D5),
// including candidates that are sequences of launches (split-K's shape: verified and timed whole).
// The lead runs this executable directly on the GPU machine; it finds the ktune binary through
// $KTUNE_BIN (else the path it was built with). Without a GPU every test skips with the reason,
// except WorkerWithoutGpuSaysWhy, which then checks the worker's refusal.
#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>

#include <gtest/gtest.h>

#include "gpu_availability.hpp"

#include "harness/device_info.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "ktune/error.hpp"
#include "measure/candidate_runner.hpp"
#include "measure/ceilings.hpp"
#include "measure/copy_kernel.hpp"

namespace ktune::measure {
namespace {

std::string ktune_bin() {
  const char* env = std::getenv("KTUNE_BIN");
  return env && *env ? env : KTUNE_BIN_DEFAULT;
}

using test::no_gpu_reason;

#define REQUIRE_GPU()                                                           \
  do {                                                                          \
    const std::string why_ = no_gpu_reason();                                   \
    if (!why_.empty()) GTEST_SKIP() << "no usable GPU: " << why_;               \
    struct stat st_ {};                                                         \
    ASSERT_EQ(::stat(ktune_bin().c_str(), &st_), 0)                             \
        << "ktune binary not found at '" << ktune_bin() << "' (set KTUNE_BIN)"; \
  } while (0)

RunnerOptions runner_options() {
  RunnerOptions o;
  o.worker_command = {ktune_bin(), "worker", "--device", "0"};
  return o;
}

TimingOptions quick_timing() {
  TimingOptions t;
  t.max_time_ms = 200;  // the tests check outcomes, not precision
  t.candidate_timeout_ms = 60000;
  return t;
}

std::string arch() { return harness::query_device(0).arch(); }

/// A copy request whose kernel is replaced by `name` from `source` (same signature as ktune_copy).
CandidateRequest planted(const std::string& name, const std::string& source, uint64_t n,
                         const TimingOptions& t) {
  CandidateRequest r = make_copy_request(n, DType::kF32, CopyConfig{}, arch(), t);
  harness::CompileRequest c;
  c.source = source;
  c.program_name = name + ".cu";
  c.name_expressions = {name};
  c.arch = arch();
  harness::NvrtcCompiler compiler;
  const harness::CompileResult res = compiler.compile(c);
  r.launches.at(0).cubin = res.cubin;
  r.launches.at(0).function = res.lowered_names.at(name);
  r.name = name;
  return r;
}

const char* kPlanted = R"CUDA(
// Writes far outside any allocation: CUDA_ERROR_ILLEGAL_ADDRESS, the context is lost.
__global__ void planted_fault(const uint4* src, uint4* dst, unsigned long long n) {
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  uint4* wild = (uint4*)(0xdead00000000ull);
  if (i < n) wild[i * 4099] = src[i];
}
// Spins until the input holds a value the random fill never makes (a NaN): never returns.
__global__ void planted_hang(const uint4* src, uint4* dst, unsigned long long n) {
  volatile const unsigned* p = (volatile const unsigned*)src;
  while (p[0] != 0x7fc00001u) {}
  dst[0] = src[0];
}
// A copy that zeroes one 16-byte vector in the middle: wrong, and must be `incorrect`.
__global__ void planted_wrong(const uint4* src, uint4* dst, unsigned long long n) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    uint4 v = src[i];
    if (i == n / 2) v = make_uint4(0, 0, 0, 0);
    dst[i] = v;
  }
}
)CUDA";

TEST(MeasureGpu, WorkerWithoutGpuSaysWhy) {
  const std::string why = no_gpu_reason();
  if (why.empty()) GTEST_SKIP() << "a GPU is present: this test covers the machine without one";
  CandidateRunner runner(runner_options());
  CandidateRequest r;
  r.name = "anything";
  try {
    runner.run(r);
    FAIL() << "the worker measured without a GPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNoDevice) << e.what();
    EXPECT_NE(std::string(e.what()).find("worker cannot measure"), std::string::npos) << e.what();
  }
}

TEST(MeasureGpu, PlantedFaultHangAndWrongKernelsAmongGoodOnes) {
  REQUIRE_GPU();
  const uint64_t n = 1 << 22;  // 16 MiB of f32
  const TimingOptions t = quick_timing();
  CandidateRunner runner(runner_options());
  struct Step {
    CandidateRequest req;
    Outcome want;
  };
  std::vector<Step> steps;
  auto good = [&](int i) {
    CandidateRequest r = make_copy_request(n, DType::kF32, CopyConfig{}, arch(), t);
    r.name += ".good" + std::to_string(i);
    return r;
  };
  steps.push_back({good(1), Outcome::kOk});
  steps.push_back({planted("planted_fault", kPlanted, n, t), Outcome::kCrashed});
  steps.push_back({good(2), Outcome::kOk});
  CandidateRequest hang = planted("planted_hang", kPlanted, n, t);
  hang.timing.candidate_timeout_ms = 5000;
  steps.push_back({hang, Outcome::kTimeout});
  steps.push_back({good(3), Outcome::kOk});
  CandidateRequest wrong = planted("planted_wrong", kPlanted, n, t);
  wrong.launches.at(0).grid = {1024, 1, 1};
  steps.push_back({wrong, Outcome::kIncorrect});
  steps.push_back({good(4), Outcome::kOk});
  for (std::size_t i = 0; i < steps.size(); ++i) {
    steps[i].req.id = i;
    const CandidateResult r = runner.run(steps[i].req);
    SCOPED_TRACE(r.name);
    EXPECT_EQ(to_string(r.outcome), to_string(steps[i].want)) << r.reason;
    if (steps[i].want == Outcome::kOk) {
      ASSERT_TRUE(r.stats);
      EXPECT_GT(r.stats->median, 0);
      EXPECT_GE(r.stats->samples, 10U);
      EXPECT_EQ(r.rel_err, 0);  // a copy is exact
      EXPECT_GT(r.gbps, 0);
    } else {
      EXPECT_FALSE(r.reason.empty());
    }
    if (steps[i].want == Outcome::kCrashed) {
      EXPECT_NE(r.reason.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << r.reason;
    }
    if (steps[i].want == Outcome::kIncorrect) {
      // One zeroed vector of 4M floats: rel_err ~1e-3 > f32's 1e-4, max abs error >= 0.25.
      EXPECT_GT(r.rel_err, 1e-4) << r.reason;
      EXPECT_GE(r.max_abs_err, 0.25) << r.reason;
    }
  }
  EXPECT_EQ(runner.workers_started(), 3);  // the fault and the hang each cost one worker
}

TEST(MeasureGpu, SharedMemoryBeyondTheDeviceIsExceedsLimits) {
  REQUIRE_GPU();
  CandidateRequest r = make_copy_request(1 << 20, DType::kF32, CopyConfig{}, arch(), quick_timing());
  r.launches.at(0).shared_bytes = 1 << 20;  // 1 MiB: more than any GPU's opt-in limit
  CandidateRunner runner(runner_options());
  const CandidateResult res = runner.run(r);
  EXPECT_EQ(res.outcome, Outcome::kExceedsLimits) << res.reason;
  EXPECT_NE(res.reason.find("shared memory"), std::string::npos) << res.reason;
}

TEST(MeasureGpu, EveryDtypeIsFilledAndComparedExactlyByACopy) {
  REQUIRE_GPU();
  CandidateRunner runner(runner_options());
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16, DType::kFP8E4M3, DType::kFP8E5M2}) {
    const CandidateResult r = runner.run(make_copy_request(1 << 20, d, CopyConfig{}, arch(), quick_timing()));
    EXPECT_EQ(r.outcome, Outcome::kOk) << to_string(d) << ": " << r.reason;
    EXPECT_EQ(r.rel_err, 0) << to_string(d);
  }
}

TEST(MeasureGpu, ShortKernelIsTimedInGraphBatchesAndRotationWorks) {
  REQUIRE_GPU();
  CandidateRunner runner(runner_options());
  TimingOptions t = quick_timing();
  const CandidateResult batched =
      runner.run(make_copy_request(1 << 16, DType::kF32, CopyConfig{}, arch(), t));
  ASSERT_EQ(batched.outcome, Outcome::kOk) << batched.reason;
  EXPECT_GT(batched.launches_per_sample, 1);
  EXPECT_LT(batched.stats->median, t.graph_batch_threshold_us);
  t.flush = FlushMode::kRotate;
  const CandidateResult rotated =
      runner.run(make_copy_request(1 << 16, DType::kF32, CopyConfig{}, arch(), t));
  ASSERT_EQ(rotated.outcome, Outcome::kOk) << rotated.reason;
  EXPECT_EQ(rotated.flush, "rotate");
}

TEST(MeasureGpu, OneMillisecondCopyAgreesWithCuptiActivityWithin2Percent) {
  REQUIRE_GPU();
  TimingOptions t;
  t.activity_timer = true;
  // 2 x 2 GiB moved: ~1 ms at the H200's ~4.3 TB/s.
  CandidateRunner runner(runner_options());
  const CandidateResult r = runner.run(make_copy_request(512ULL << 20, DType::kF32, CopyConfig{}, arch(), t));
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.reason;
  ASSERT_TRUE(r.activity_median_us) << "no CUPTI Activity timing: " << r.counters.dump();
  const double rel = *r.activity_median_us / r.stats->median - 1;
  RecordProperty("event_median_us", std::to_string(r.stats->median));
  RecordProperty("activity_median_us", std::to_string(*r.activity_median_us));
  EXPECT_LT(std::abs(rel), 0.02) << "events " << r.stats->median << " us, activity " << *r.activity_median_us
                                 << " us";
  EXPECT_GT(r.stats->median, 300);  // it really is a long kernel (~1 ms on the H200)
}

TEST(MeasureGpu, CopyCountersReportDramBytesWithin2Percent) {
  REQUIRE_GPU();
  TimingOptions t = quick_timing();
  t.counters = true;
  t.metrics = {"dram__bytes_read.sum", "dram__bytes_write.sum"};
  const uint64_t n = 1ULL << 30;  // 4 GiB each way: L2 (60 MiB) leftovers stay under 1.5 %
  CandidateRunner runner(runner_options());
  const CandidateResult r = runner.run(make_copy_request(n, DType::kF32, CopyConfig{}, arch(), t));
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.reason;
  if (!r.counters.value("available", false)) {
    const std::string reason = r.counters.value("reason", std::string("?"));
    if (reason.find("PRIVILEGES") != std::string::npos)
      GTEST_SKIP() << "counters not permitted here: " << reason;
    FAIL() << "counters unavailable: " << reason;
  }
  const double bytes = 4.0 * static_cast<double>(n);
  const double read = r.counters.at("metrics").at("dram__bytes_read.sum").get<double>();
  const double write = r.counters.at("metrics").at("dram__bytes_write.sum").get<double>();
  RecordProperty("dram_read_bytes", std::to_string(read));
  RecordProperty("dram_write_bytes", std::to_string(write));
  EXPECT_NEAR(read / bytes, 1.0, 0.02) << read << " bytes read for " << bytes;
  EXPECT_NEAR(write / bytes, 1.0, 0.02) << write << " bytes written for " << bytes;
}

const char* kHalves = R"CUDA(
// The two halves of a copy (the copy signature, n in 16-byte vectors): a launch sequence whose
// answer exists only after both ran.
__global__ void copy_lower(const uint4* src, uint4* dst, unsigned long long n) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n / 2; i += stride)
    dst[i] = src[i];
}
__global__ void copy_upper(const uint4* src, uint4* dst, unsigned long long n) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = n / 2 + (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = src[i];
}
)CUDA";

/// A copy of `n` f32 as the sequence of `names` (each a kHalves kernel), all from one cubin.
CandidateRequest halves(const std::vector<std::string>& names, uint64_t n, const TimingOptions& t) {
  CandidateRequest r = make_copy_request(n, DType::kF32, CopyConfig{}, arch(), t);
  harness::CompileRequest c;
  c.source = kHalves;
  c.program_name = "halves.cu";
  c.name_expressions = {"copy_lower", "copy_upper"};
  c.arch = arch();
  harness::NvrtcCompiler compiler;
  const harness::CompileResult res = compiler.compile(c);
  const LaunchSpec whole = r.launches.at(0);
  r.launches.clear();
  for (const std::string& name : names) {
    LaunchSpec l = whole;
    l.cubin = res.cubin;
    l.function = res.lowered_names.at(name);
    r.launches.push_back(l);
  }
  r.name = "halves";
  for (const std::string& name : names) r.name += "." + name;
  return r;
}

TEST(MeasureGpu, ALaunchSequenceIsVerifiedAfterItsLastLaunchAndTimedWhole) {
  REQUIRE_GPU();
  const uint64_t n = 64ULL << 20;  // 256 MiB each way: each half ~60 us, far above launch gaps
  CandidateRunner runner(runner_options());
  const CandidateResult both = runner.run(halves({"copy_lower", "copy_upper"}, n, quick_timing()));
  ASSERT_EQ(both.outcome, Outcome::kOk) << both.reason;
  EXPECT_EQ(both.rel_err, 0);  // the copy is exact once both halves ran
  ASSERT_EQ(both.resources.at("launches").size(), 2U) << both.resources.dump();
  // The second launch is the upper half (its lowered, mangled name).
  EXPECT_NE(both.resources.at("launches").at(1).at("function").get<std::string>().find("copy_upper"),
            std::string::npos)
      << both.resources.dump();

  const CandidateResult lower = runner.run(halves({"copy_lower"}, n, quick_timing()));
  EXPECT_EQ(lower.outcome, Outcome::kIncorrect) << "half a copy passed: " << lower.reason;

  // One sample covers the whole sequence: twice the lower half takes about twice as long as once.
  // Half a copy is wrong by design, so these two are timed unverified (no checks).
  CandidateRequest once_request = halves({"copy_lower"}, n, TimingOptions{});
  CandidateRequest twice_request = halves({"copy_lower", "copy_lower"}, n, TimingOptions{});
  once_request.checks.clear();
  twice_request.checks.clear();
  const CandidateResult once = runner.run(once_request);
  const CandidateResult twice = runner.run(twice_request);
  ASSERT_TRUE(once.stats && twice.stats) << once.reason << " / " << twice.reason;
  const double ratio = twice.stats->median / once.stats->median;
  RecordProperty("twice_over_once", std::to_string(ratio));
  EXPECT_GT(ratio, 1.6) << once.stats->median << " us once, " << twice.stats->median << " us twice";
  EXPECT_LT(ratio, 2.4) << once.stats->median << " us once, " << twice.stats->median << " us twice";
}

TEST(MeasureGpu, ShortSequencesAreGraphBatchedWholeAndCountersCoverEveryLaunch) {
  REQUIRE_GPU();
  CandidateRunner runner(runner_options());
  TimingOptions t = quick_timing();
  t.activity_timer = true;
  t.counters = true;
  t.metrics = {"dram__bytes_read.sum", "gpu__time_duration.sum"};
  const CandidateResult r = runner.run(halves({"copy_lower", "copy_upper"}, 1 << 16, t));
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.reason;
  EXPECT_EQ(r.rel_err, 0);  // every graph-batched run did both halves: verified before batching
  EXPECT_GT(r.launches_per_sample, 1);
  if (r.activity_median_us) {
    // Activity sums the two kernels' own durations. No bound against the events: inside a graph batch
    // tiny kernels overlap their ramp-up and tail, so the per-run event time can be the smaller one.
    EXPECT_GT(*r.activity_median_us, 0) << r.counters.dump();
  }
  if (r.counters.value("available", false)) {
    EXPECT_EQ(r.counters.at("ranges"), 2) << r.counters.dump();  // one range per launch of the run
  } else {
    std::cout << "counters unavailable: " << r.counters.value("reason", std::string("?")) << "\n";
  }
}

TEST(MeasureGpu, CeilingsAreMeasuredWithCopyAndCublasLt) {
  REQUIRE_GPU();
  CandidateRunner runner(runner_options());
  CeilingOptions o;
  o.copy_bytes = 512ULL << 20;
  o.gemm_size = 4096;
  const nlohmann::json c = measure_ceilings(0, runner, o);
  RecordProperty("ceilings", c.dump());
  std::cout << "ceilings: " << c.dump() << "\n";
  EXPECT_FALSE(c.contains("unavailable")) << c.dump();
  EXPECT_GT(c.value("copy_gbps", 0.0), 100.0) << c.dump();  // any current GPU copies > 100 GB/s
  EXPECT_GT(c.value("bf16_tflops", 0.0), 10.0) << c.dump();
  EXPECT_GT(c.value("f16_tflops", 0.0), 10.0) << c.dump();
}

}  // namespace
}  // namespace ktune::measure
