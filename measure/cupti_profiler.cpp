#include "measure/cupti_profiler.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "harness/cupti_api.hpp"
#include "ktune/error.hpp"
#include "measure/steady_clock.hpp"

namespace ktune::measure {

namespace {
/// A CUPTI parameter struct, zeroed, with its structSize set.
template <class T>
T params(size_t struct_size) {
  T p{};
  p.structSize = struct_size;
  return p;
}

/// A CUPTI failure inside the profiler: becomes {"available":false,"reason":...}, not an Error.
struct Unavailable {
  std::string reason;
};

// Ranges the counter image holds: the pass profiles one run of a candidate's launch sequence (up to
// 3 kernels today: zeroing, GEMM, reduction); 8 leaves room.
constexpr size_t kMaxRanges = 8;

/// One CUPTI range-profiler pass over one run of a candidate, set up step by step and undone in
/// reverse order by the destructor, whatever happened. Every CUPTI failure throws Unavailable.
class CounterPass {
 public:
  CounterPass(const harness::CuptiApi& api, CUcontext ctx, int ordinal,
              const std::vector<std::string>& metrics)
      : api_(api), ctx_(ctx), ordinal_(ordinal), metrics_(metrics) {
    for (const std::string& m : metrics_) names_.push_back(m.c_str());
  }
  ~CounterPass();
  CounterPass(const CounterPass&) = delete;
  CounterPass& operator=(const CounterPass&) = delete;

  /// Initializes the profiler and checks the device supports range profiling.
  void initialize();
  /// The host object configured for the metrics: the config image and its pass count.
  void configure(const std::string& chip, std::vector<uint8_t>& availability);
  /// Enables the range profiler on the context with a counter data image for kMaxRanges ranges.
  void enable();
  /// Profiles one call of `launch_once` and decodes the counter data.
  void profile(const std::function<void()>& launch_once);
  /// The metrics over the recorded ranges (one per kernel of the run).
  nlohmann::json values();

  std::string chip_name();
  std::vector<uint8_t> counter_availability();
  size_t passes() const { return passes_; }
  size_t ranges() const { return ranges_; }
  size_t dropped_ranges() const { return dropped_; }

 private:
  void check(CUptiResult r, const char* call) const;
  std::vector<std::vector<double>> evaluate_ranges();

  const harness::CuptiApi& api_;
  CUcontext ctx_;
  int ordinal_;
  const std::vector<std::string>& metrics_;
  std::vector<const char*> names_;
  bool initialized_ = false;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  CUpti_RangeProfiler_Object* range_ = nullptr;
  std::vector<uint8_t> config_;
  std::vector<uint8_t> data_;
  size_t passes_ = 0;
  size_t ranges_ = 0;
  size_t dropped_ = 0;
};

CounterPass::~CounterPass() {
  if (range_) {
    auto p = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = range_;
    api_.cuptiRangeProfilerDisable(&p);
  }
  if (host_) {
    auto p =
        params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    p.pHostObject = host_;
    api_.cuptiProfilerHostDeinitialize(&p);
  }
  if (initialized_) {
    auto p = params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
    api_.cuptiProfilerDeInitialize(&p);
  }
}

void CounterPass::check(CUptiResult r, const char* call) const {
  if (r == CUPTI_SUCCESS) return;
  const char* s = nullptr;
  api_.cuptiGetResultString(r, &s);
  std::string msg = fmt::format("{} failed: {}", call, s ? s : "?");
  const char* m = nullptr;
  if (api_.cuptiGetErrorMessage && api_.cuptiGetErrorMessage(r, &m) == CUPTI_SUCCESS && m && *m)
    msg += ": " + std::string(m);
  throw Unavailable{msg};
}

void CounterPass::initialize() {
  auto ip = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  check(api_.cuptiProfilerInitialize(&ip), "cuptiProfilerInitialize");
  initialized_ = true;

  auto ds = params<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  CUdevice dev = ordinal_;
  ds.cuDevice = dev;
  ds.api = CUPTI_PROFILER_RANGE_PROFILING;
  check(api_.cuptiProfilerDeviceSupported(&ds), "cuptiProfilerDeviceSupported");
  if (ds.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    throw Unavailable{
        fmt::format("range profiling unsupported on device {} (isSupported={}, arch={}, vgpu={}, "
                    "confidential={}, cmp={}, wsl={})",
                    ordinal_, static_cast<int>(ds.isSupported), static_cast<int>(ds.architecture),
                    static_cast<int>(ds.vGpu), static_cast<int>(ds.confidentialCompute),
                    static_cast<int>(ds.cmp), static_cast<int>(ds.wsl))};
  }
}

std::string CounterPass::chip_name() {
  auto cn = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  cn.deviceIndex = static_cast<size_t>(ordinal_);
  check(api_.cuptiDeviceGetChipName(&cn), "cuptiDeviceGetChipName");
  return cn.pChipName;
}

std::vector<uint8_t> CounterPass::counter_availability() {
  auto ca = params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  ca.ctx = ctx_;
  check(api_.cuptiProfilerGetCounterAvailability(&ca), "cuptiProfilerGetCounterAvailability(size)");
  std::vector<uint8_t> avail(ca.counterAvailabilityImageSize);
  ca.pCounterAvailabilityImage = avail.data();
  check(api_.cuptiProfilerGetCounterAvailability(&ca), "cuptiProfilerGetCounterAvailability");
  return avail;
}

void CounterPass::configure(const std::string& chip, std::vector<uint8_t>& availability) {
  auto hi = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  hi.pChipName = chip.c_str();
  hi.pCounterAvailabilityImage = availability.data();
  check(api_.cuptiProfilerHostInitialize(&hi), "cuptiProfilerHostInitialize");
  host_ = hi.pHostObject;

  auto am = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  am.pHostObject = host_;
  am.ppMetricNames = names_.data();
  am.numMetrics = names_.size();
  check(api_.cuptiProfilerHostConfigAddMetrics(&am),
        fmt::format("cuptiProfilerHostConfigAddMetrics({})", fmt::join(metrics_, ",")).c_str());
  auto cs = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  cs.pHostObject = host_;
  check(api_.cuptiProfilerHostGetConfigImageSize(&cs), "cuptiProfilerHostGetConfigImageSize");
  config_.resize(cs.configImageSize);
  auto gc = params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  gc.pHostObject = host_;
  gc.pConfigImage = config_.data();
  gc.configImageSize = config_.size();
  check(api_.cuptiProfilerHostGetConfigImage(&gc), "cuptiProfilerHostGetConfigImage");
  auto np = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  np.pConfigImage = config_.data();
  np.configImageSize = config_.size();
  check(api_.cuptiProfilerHostGetNumOfPasses(&np), "cuptiProfilerHostGetNumOfPasses");
  passes_ = np.numOfPasses;
}

void CounterPass::enable() {
  auto en = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  en.ctx = ctx_;
  check(api_.cuptiRangeProfilerEnable(&en), "cuptiRangeProfilerEnable");
  range_ = en.pRangeProfilerObject;

  auto gs = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  gs.pRangeProfilerObject = range_;
  gs.pMetricNames = names_.data();
  gs.numMetrics = names_.size();
  gs.maxNumOfRanges = kMaxRanges;
  gs.maxNumRangeTreeNodes = kMaxRanges;
  check(api_.cuptiRangeProfilerGetCounterDataSize(&gs), "cuptiRangeProfilerGetCounterDataSize");
  data_.resize(gs.counterDataSize);
  auto ci = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  ci.pRangeProfilerObject = range_;
  ci.counterDataSize = data_.size();
  ci.pCounterData = data_.data();
  check(api_.cuptiRangeProfilerCounterDataImageInitialize(&ci),
        "cuptiRangeProfilerCounterDataImageInitialize");

  auto sc = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  sc.pRangeProfilerObject = range_;
  sc.configSize = config_.size();
  sc.pConfig = config_.data();
  sc.counterDataImageSize = data_.size();
  sc.pCounterDataImage = data_.data();
  sc.range = CUPTI_AutoRange;
  sc.replayMode = CUPTI_KernelReplay;
  sc.maxRangesPerPass = kMaxRanges;
  sc.numNestingLevels = 1;
  sc.minNestingLevel = 1;
  sc.passIndex = 0;
  sc.targetNestingLevel = 1;
  check(api_.cuptiRangeProfilerSetConfig(&sc), "cuptiRangeProfilerSetConfig");
}

void CounterPass::profile(const std::function<void()>& launch_once) {
  auto st = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  st.pRangeProfilerObject = range_;
  check(api_.cuptiRangeProfilerStart(&st), "cuptiRangeProfilerStart");
  launch_once();  // CUDA errors propagate as ktune::Error: the kernel, not CUPTI, failed
  auto sp = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  sp.pRangeProfilerObject = range_;
  check(api_.cuptiRangeProfilerStop(&sp), "cuptiRangeProfilerStop");
  auto dd = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  dd.pRangeProfilerObject = range_;
  check(api_.cuptiRangeProfilerDecodeData(&dd), "cuptiRangeProfilerDecodeData");
  dropped_ = dd.numOfRangeDropped;

  auto di = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  di.pCounterDataImage = data_.data();
  di.counterDataImageSize = data_.size();
  check(api_.cuptiRangeProfilerGetCounterDataInfo(&di), "cuptiRangeProfilerGetCounterDataInfo");
  if (di.numTotalRanges == 0) throw Unavailable{"the profiled pass recorded no range (no kernel ran?)"};
  ranges_ = di.numTotalRanges;
}

std::vector<std::vector<double>> CounterPass::evaluate_ranges() {
  std::vector<std::vector<double>> per_range;
  for (size_t r = 0; r < ranges_; ++r) {
    std::vector<double> vals(names_.size());
    auto ev = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    ev.pHostObject = host_;
    ev.pCounterDataImage = data_.data();
    ev.counterDataImageSize = data_.size();
    ev.rangeIndex = r;
    ev.ppMetricNames = names_.data();
    ev.numMetrics = names_.size();
    ev.pMetricValues = vals.data();
    check(api_.cuptiProfilerHostEvaluateToGpuValues(&ev), "cuptiProfilerHostEvaluateToGpuValues");
    per_range.push_back(std::move(vals));
  }
  return per_range;
}

nlohmann::json CounterPass::values() {
  // One range per kernel of the pass (a candidate's launch sequence: GEMM, reduction, ...). Counts
  // (".sum") add; every other metric (percentages, rates, averages) is the mean over the ranges
  // weighted by each range's duration when gpu__time_duration.sum is among the metrics, else the
  // plain mean. One range: its value either way.
  const std::vector<std::vector<double>> per_range = evaluate_ranges();
  nlohmann::json values = nlohmann::json::object();
  const auto duration = std::find(metrics_.begin(), metrics_.end(), "gpu__time_duration.sum");
  for (size_t m = 0; m < names_.size(); ++m) {
    const bool count = metrics_[m].ends_with(".sum");
    double total = 0;
    double weights = 0;
    for (const auto& vals : per_range) {
      const double w = (count || duration == metrics_.end()) ? 1.0 : vals[duration - metrics_.begin()];
      total += count ? vals[m] : w * vals[m];
      weights += w;
    }
    values[metrics_[m]] = count ? total : (weights > 0 ? total / weights : 0.0);
  }
  return values;
}

}  // namespace

nlohmann::json profile_counters(CUcontext ctx, int ordinal, const std::vector<std::string>& metrics,
                                const std::function<void()>& launch_once) {
  std::string why;
  const harness::CuptiApi* api = harness::cupti_or_null(&why);
  if (!api) return {{"available", false}, {"reason", why}};
  if (metrics.empty()) return {{"available", false}, {"reason", "no metrics requested"}};
  const double t0 = now_ms();
  try {
    CounterPass pass(*api, ctx, ordinal, metrics);
    pass.initialize();
    const std::string chip = pass.chip_name();
    std::vector<uint8_t> availability = pass.counter_availability();
    pass.configure(chip, availability);
    pass.enable();
    pass.profile(launch_once);
    const nlohmann::json values = pass.values();
    return {{"available", true},
            {"metrics", values},
            {"passes", pass.passes()},
            {"ranges", pass.ranges()},
            {"dropped_ranges", pass.dropped_ranges()},
            {"ms", now_ms() - t0}};
  } catch (const Unavailable& u) {
    return {{"available", false}, {"reason", u.reason}};
  }
}

}  // namespace ktune::measure
