#pragma once
/// CUPTI, opened at run time from libcupti.so.13 (D2): loading only; the activity timer and the range
/// profiler that use it live in their own files. Members are named like the CUPTI functions:
/// `api->cuptiRangeProfilerStart(&params)`. Wrap calls in KTUNE_CUPTI_CHECK (harness/cuda_check.hpp).
///
/// The range profiler's host side (cuptiProfilerHost*) is exported by libcupti itself, which opens
/// libnvperf_host.so by its bare name at run time; the loader preloads libnvperf_host.so (and
/// libnvperf_target.so) from libcupti's folder so that lookup succeeds without LD_LIBRARY_PATH.

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <string>

namespace ktune::harness {

struct CuptiApi {
  decltype(&::cuptiGetVersion) cuptiGetVersion = nullptr;
  decltype(&::cuptiGetResultString) cuptiGetResultString = nullptr;
  decltype(&::cuptiGetErrorMessage) cuptiGetErrorMessage = nullptr;
  // Activity API
  decltype(&::cuptiActivityRegisterCallbacks) cuptiActivityRegisterCallbacks = nullptr;
  decltype(&::cuptiActivityEnable) cuptiActivityEnable = nullptr;
  decltype(&::cuptiActivityDisable) cuptiActivityDisable = nullptr;
  decltype(&::cuptiActivityFlushAll) cuptiActivityFlushAll = nullptr;
  decltype(&::cuptiActivityGetNextRecord) cuptiActivityGetNextRecord = nullptr;
  decltype(&::cuptiActivityGetNumDroppedRecords) cuptiActivityGetNumDroppedRecords = nullptr;
  // Profiler (target side)
  decltype(&::cuptiProfilerInitialize) cuptiProfilerInitialize = nullptr;
  decltype(&::cuptiProfilerDeInitialize) cuptiProfilerDeInitialize = nullptr;
  decltype(&::cuptiProfilerDeviceSupported) cuptiProfilerDeviceSupported = nullptr;
  decltype(&::cuptiDeviceGetChipName) cuptiDeviceGetChipName = nullptr;
  decltype(&::cuptiProfilerGetCounterAvailability) cuptiProfilerGetCounterAvailability = nullptr;
  // Profiler (host side: metric configuration and evaluation)
  decltype(&::cuptiProfilerHostInitialize) cuptiProfilerHostInitialize = nullptr;
  decltype(&::cuptiProfilerHostDeinitialize) cuptiProfilerHostDeinitialize = nullptr;
  decltype(&::cuptiProfilerHostConfigAddMetrics) cuptiProfilerHostConfigAddMetrics = nullptr;
  decltype(&::cuptiProfilerHostGetConfigImageSize) cuptiProfilerHostGetConfigImageSize = nullptr;
  decltype(&::cuptiProfilerHostGetConfigImage) cuptiProfilerHostGetConfigImage = nullptr;
  decltype(&::cuptiProfilerHostGetNumOfPasses) cuptiProfilerHostGetNumOfPasses = nullptr;
  decltype(&::cuptiProfilerHostEvaluateToGpuValues) cuptiProfilerHostEvaluateToGpuValues = nullptr;
  // Range profiler
  decltype(&::cuptiRangeProfilerEnable) cuptiRangeProfilerEnable = nullptr;
  decltype(&::cuptiRangeProfilerDisable) cuptiRangeProfilerDisable = nullptr;
  decltype(&::cuptiRangeProfilerGetCounterDataSize) cuptiRangeProfilerGetCounterDataSize = nullptr;
  decltype(&::cuptiRangeProfilerCounterDataImageInitialize) cuptiRangeProfilerCounterDataImageInitialize =
      nullptr;
  decltype(&::cuptiRangeProfilerSetConfig) cuptiRangeProfilerSetConfig = nullptr;
  decltype(&::cuptiRangeProfilerStart) cuptiRangeProfilerStart = nullptr;
  decltype(&::cuptiRangeProfilerStop) cuptiRangeProfilerStop = nullptr;
  decltype(&::cuptiRangeProfilerPushRange) cuptiRangeProfilerPushRange = nullptr;
  decltype(&::cuptiRangeProfilerPopRange) cuptiRangeProfilerPopRange = nullptr;
  decltype(&::cuptiRangeProfilerDecodeData) cuptiRangeProfilerDecodeData = nullptr;
  decltype(&::cuptiRangeProfilerGetCounterDataInfo) cuptiRangeProfilerGetCounterDataInfo = nullptr;
  decltype(&::cuptiRangeProfilerCounterDataGetRangeInfo) cuptiRangeProfilerCounterDataGetRangeInfo = nullptr;

  std::string library;  ///< the libcupti that was opened
};

/// CUPTI, loaded once (thread-safe), or nullptr when it cannot be opened or lacks an entry point; then
/// `*why` (when given) says why, naming the library. Never throws: counters are optional.
const CuptiApi* cupti_or_null(std::string* why = nullptr);

/// The thrower behind KTUNE_CUPTI_CHECK: Error(kRuntime) with cuptiGetResultString's name for `r`.
[[noreturn]] void throw_cupti_error(CUptiResult r, const char* call, const char* where);

}  // namespace ktune::harness
