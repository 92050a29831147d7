#include "measure/cupti_profiler.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include <fmt/format.h>

#include "harness/cupti_api.hpp"
#include "ktune/error.hpp"

namespace ktune::harness {

namespace {
double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

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

/// Undoes the profiler's set-up in reverse order, whatever happened.
struct Teardown {
  const CuptiApi* api = nullptr;
  bool initialized = false;
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_RangeProfiler_Object* range = nullptr;
  ~Teardown() {
    if (range) {
      auto p = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
      p.pRangeProfilerObject = range;
      api->cuptiRangeProfilerDisable(&p);
    }
    if (host) {
      auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(
          CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
      p.pHostObject = host;
      api->cuptiProfilerHostDeinitialize(&p);
    }
    if (initialized) {
      auto p = params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
      api->cuptiProfilerDeInitialize(&p);
    }
  }
};

// Ranges the counter image holds: the pass profiles one run of a candidate's launch sequence (up to
// 3 kernels today: zeroing, GEMM, reduction); 8 leaves room.
constexpr size_t kMaxRanges = 8;
}  // namespace

nlohmann::json profile_counters(CUcontext ctx, int ordinal, const std::vector<std::string>& metrics,
                                const std::function<void()>& launch_once) {
  std::string why;
  const CuptiApi* api = cupti_or_null(&why);
  if (!api) return {{"available", false}, {"reason", why}};
  if (metrics.empty()) return {{"available", false}, {"reason", "no metrics requested"}};

  auto check = [&](CUptiResult r, const char* call) {
    if (r == CUPTI_SUCCESS) return;
    const char* s = nullptr;
    api->cuptiGetResultString(r, &s);
    std::string msg = fmt::format("{} failed: {}", call, s ? s : "?");
    const char* m = nullptr;
    if (api->cuptiGetErrorMessage && api->cuptiGetErrorMessage(r, &m) == CUPTI_SUCCESS && m && *m)
      msg += ": " + std::string(m);
    throw Unavailable{msg};
  };
  std::vector<const char*> names;
  for (const std::string& m : metrics) names.push_back(m.c_str());

  const double t0 = now_ms();
  Teardown td;
  td.api = api;
  try {
    auto ip = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    check(api->cuptiProfilerInitialize(&ip), "cuptiProfilerInitialize");
    td.initialized = true;

    auto ds =
        params<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
    CUdevice dev = ordinal;
    ds.cuDevice = dev;
    ds.api = CUPTI_PROFILER_RANGE_PROFILING;
    check(api->cuptiProfilerDeviceSupported(&ds), "cuptiProfilerDeviceSupported");
    if (ds.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
      throw Unavailable{
          fmt::format("range profiling unsupported on device {} (isSupported={}, arch={}, vgpu={}, "
                      "confidential={}, cmp={}, wsl={})",
                      ordinal, static_cast<int>(ds.isSupported), static_cast<int>(ds.architecture),
                      static_cast<int>(ds.vGpu), static_cast<int>(ds.confidentialCompute),
                      static_cast<int>(ds.cmp), static_cast<int>(ds.wsl))};
    }

    auto cn = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    cn.deviceIndex = static_cast<size_t>(ordinal);
    check(api->cuptiDeviceGetChipName(&cn), "cuptiDeviceGetChipName");
    const std::string chip = cn.pChipName;

    auto ca = params<CUpti_Profiler_GetCounterAvailability_Params>(
        CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
    ca.ctx = ctx;
    check(api->cuptiProfilerGetCounterAvailability(&ca), "cuptiProfilerGetCounterAvailability(size)");
    std::vector<uint8_t> avail(ca.counterAvailabilityImageSize);
    ca.pCounterAvailabilityImage = avail.data();
    check(api->cuptiProfilerGetCounterAvailability(&ca), "cuptiProfilerGetCounterAvailability");

    auto hi =
        params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    hi.pChipName = chip.c_str();
    hi.pCounterAvailabilityImage = avail.data();
    check(api->cuptiProfilerHostInitialize(&hi), "cuptiProfilerHostInitialize");
    td.host = hi.pHostObject;

    auto am = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    am.pHostObject = td.host;
    am.ppMetricNames = names.data();
    am.numMetrics = names.size();
    check(api->cuptiProfilerHostConfigAddMetrics(&am),
          fmt::format("cuptiProfilerHostConfigAddMetrics({})", fmt::join(metrics, ",")).c_str());
    auto cs = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    cs.pHostObject = td.host;
    check(api->cuptiProfilerHostGetConfigImageSize(&cs), "cuptiProfilerHostGetConfigImageSize");
    std::vector<uint8_t> config(cs.configImageSize);
    auto gc = params<CUpti_Profiler_Host_GetConfigImage_Params>(
        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    gc.pHostObject = td.host;
    gc.pConfigImage = config.data();
    gc.configImageSize = config.size();
    check(api->cuptiProfilerHostGetConfigImage(&gc), "cuptiProfilerHostGetConfigImage");
    auto np = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
        CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    np.pConfigImage = config.data();
    np.configImageSize = config.size();
    check(api->cuptiProfilerHostGetNumOfPasses(&np), "cuptiProfilerHostGetNumOfPasses");

    auto en = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    en.ctx = ctx;
    check(api->cuptiRangeProfilerEnable(&en), "cuptiRangeProfilerEnable");
    td.range = en.pRangeProfilerObject;

    auto gs = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    gs.pRangeProfilerObject = td.range;
    gs.pMetricNames = names.data();
    gs.numMetrics = names.size();
    gs.maxNumOfRanges = kMaxRanges;
    gs.maxNumRangeTreeNodes = kMaxRanges;
    check(api->cuptiRangeProfilerGetCounterDataSize(&gs), "cuptiRangeProfilerGetCounterDataSize");
    std::vector<uint8_t> data(gs.counterDataSize);
    auto ci = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    ci.pRangeProfilerObject = td.range;
    ci.counterDataSize = data.size();
    ci.pCounterData = data.data();
    check(api->cuptiRangeProfilerCounterDataImageInitialize(&ci),
          "cuptiRangeProfilerCounterDataImageInitialize");

    auto sc = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    sc.pRangeProfilerObject = td.range;
    sc.configSize = config.size();
    sc.pConfig = config.data();
    sc.counterDataImageSize = data.size();
    sc.pCounterDataImage = data.data();
    sc.range = CUPTI_AutoRange;
    sc.replayMode = CUPTI_KernelReplay;
    sc.maxRangesPerPass = kMaxRanges;
    sc.numNestingLevels = 1;
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    check(api->cuptiRangeProfilerSetConfig(&sc), "cuptiRangeProfilerSetConfig");

    auto st = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    st.pRangeProfilerObject = td.range;
    check(api->cuptiRangeProfilerStart(&st), "cuptiRangeProfilerStart");
    launch_once();  // CUDA errors propagate as ktune::Error: the kernel, not CUPTI, failed
    auto sp = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    sp.pRangeProfilerObject = td.range;
    check(api->cuptiRangeProfilerStop(&sp), "cuptiRangeProfilerStop");
    auto dd =
        params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    dd.pRangeProfilerObject = td.range;
    check(api->cuptiRangeProfilerDecodeData(&dd), "cuptiRangeProfilerDecodeData");

    auto di = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    di.pCounterDataImage = data.data();
    di.counterDataImageSize = data.size();
    check(api->cuptiRangeProfilerGetCounterDataInfo(&di), "cuptiRangeProfilerGetCounterDataInfo");
    if (di.numTotalRanges == 0) throw Unavailable{"the profiled pass recorded no range (no kernel ran?)"};

    // One range per kernel of the pass (a candidate's launch sequence: GEMM, reduction, ...).
    // Counts (".sum") add; every other metric (percentages, rates, averages) is the mean over the
    // ranges weighted by each range's duration when gpu__time_duration.sum is among the metrics,
    // else the plain mean. One range: its value either way.
    nlohmann::json values = nlohmann::json::object();
    std::vector<std::vector<double>> per_range;
    for (size_t r = 0; r < di.numTotalRanges; ++r) {
      std::vector<double> vals(names.size());
      auto ev = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
          CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
      ev.pHostObject = td.host;
      ev.pCounterDataImage = data.data();
      ev.counterDataImageSize = data.size();
      ev.rangeIndex = r;
      ev.ppMetricNames = names.data();
      ev.numMetrics = names.size();
      ev.pMetricValues = vals.data();
      check(api->cuptiProfilerHostEvaluateToGpuValues(&ev), "cuptiProfilerHostEvaluateToGpuValues");
      per_range.push_back(std::move(vals));
    }
    const auto duration = std::find(metrics.begin(), metrics.end(), "gpu__time_duration.sum");
    for (size_t m = 0; m < names.size(); ++m) {
      const bool count = metrics[m].ends_with(".sum");
      double total = 0;
      double weights = 0;
      for (const auto& vals : per_range) {
        const double w = (count || duration == metrics.end()) ? 1.0 : vals[duration - metrics.begin()];
        total += count ? vals[m] : w * vals[m];
        weights += w;
      }
      values[metrics[m]] = count ? total : (weights > 0 ? total / weights : 0.0);
    }
    return {{"available", true},
            {"metrics", values},
            {"passes", np.numOfPasses},
            {"ranges", di.numTotalRanges},
            {"dropped_ranges", dd.numOfRangeDropped},
            {"ms", now_ms() - t0}};
  } catch (const Unavailable& u) {
    return {{"available", false}, {"reason", u.reason}};
  }
}

}  // namespace ktune::harness
