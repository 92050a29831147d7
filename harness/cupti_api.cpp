#include "harness/cupti_api.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "harness/cuda_check.hpp"
#include "harness/dynamic_library.hpp"
#include "ktune/error.hpp"

namespace ktune::harness {
namespace {

/// CUPTI's major version this build was compiled against (the soname libcupti.so.<major>).
constexpr const char* kCuptiMajor = "13";

struct LoadedCupti {
  DynamicLibrary library;
  /// libnvperf_host / libnvperf_target, preloaded from libcupti's folder (see the header).
  std::vector<DynamicLibrary> perfworks;
  CuptiApi api;
  std::optional<std::string> error;
};

template <class Fn>
void resolve(const DynamicLibrary& lib, Fn& slot, const char* name) {
  slot = reinterpret_cast<Fn>(lib.require(name));
}

/// The folder a candidate that dlopen accepted lives in, when it was given as a path.
std::filesystem::path folder_of(const std::string& opened) {
  const std::filesystem::path p(opened);
  if (p.has_parent_path()) return p.parent_path();
  for (const std::string& c : toolkit_library_candidates("cupti", kCuptiMajor)) {
    if (std::filesystem::path(c).has_parent_path() && std::filesystem::exists(c))
      return std::filesystem::path(c).parent_path();
  }
  return {};
}

void preload_perfworks(LoadedCupti& c) {
  const std::filesystem::path dir = folder_of(c.library.name());
  for (const char* base : {"nvperf_host", "nvperf_target"}) {
    std::vector<std::string> names = {fmt::format("lib{}.so", base)};
    if (!dir.empty()) names.push_back((dir / fmt::format("lib{}.so", base)).string());
    try {
      c.perfworks.push_back(DynamicLibrary::open(names, "CUPTI's PerfWorks"));
    } catch (const Error&) {
      // Optional: only the range profiler needs it, and it reports its own error then.
    }
  }
}

void load(LoadedCupti& c) {
  c.library = DynamicLibrary::open(toolkit_library_candidates("cupti", kCuptiMajor),
                                   "CUPTI, the CUDA profiling interface");
  preload_perfworks(c);
  CuptiApi& a = c.api;
  a.library = c.library.name();
#define KTUNE_DETAIL_CUPTI(name) resolve(c.library, a.name, #name)
  KTUNE_DETAIL_CUPTI(cuptiGetVersion);
  KTUNE_DETAIL_CUPTI(cuptiGetResultString);
  KTUNE_DETAIL_CUPTI(cuptiGetErrorMessage);
  KTUNE_DETAIL_CUPTI(cuptiActivityRegisterCallbacks);
  KTUNE_DETAIL_CUPTI(cuptiActivityEnable);
  KTUNE_DETAIL_CUPTI(cuptiActivityDisable);
  KTUNE_DETAIL_CUPTI(cuptiActivityFlushAll);
  KTUNE_DETAIL_CUPTI(cuptiActivityGetNextRecord);
  KTUNE_DETAIL_CUPTI(cuptiActivityGetNumDroppedRecords);
  KTUNE_DETAIL_CUPTI(cuptiProfilerInitialize);
  KTUNE_DETAIL_CUPTI(cuptiProfilerDeInitialize);
  KTUNE_DETAIL_CUPTI(cuptiProfilerDeviceSupported);
  KTUNE_DETAIL_CUPTI(cuptiDeviceGetChipName);
  KTUNE_DETAIL_CUPTI(cuptiProfilerGetCounterAvailability);
  KTUNE_DETAIL_CUPTI(cuptiProfilerHostInitialize);
  KTUNE_DETAIL_CUPTI(cuptiProfilerHostDeinitialize);
  KTUNE_DETAIL_CUPTI(cuptiProfilerHostConfigAddMetrics);
  KTUNE_DETAIL_CUPTI(cuptiProfilerHostGetConfigImageSize);
  KTUNE_DETAIL_CUPTI(cuptiProfilerHostGetConfigImage);
  KTUNE_DETAIL_CUPTI(cuptiProfilerHostGetNumOfPasses);
  KTUNE_DETAIL_CUPTI(cuptiProfilerHostEvaluateToGpuValues);
  KTUNE_DETAIL_CUPTI(cuptiRangeProfilerEnable);
  KTUNE_DETAIL_CUPTI(cuptiRangeProfilerDisable);
  KTUNE_DETAIL_CUPTI(cuptiRangeProfilerGetCounterDataSize);
  KTUNE_DETAIL_CUPTI(cuptiRangeProfilerCounterDataImageInitialize);
  KTUNE_DETAIL_CUPTI(cuptiRangeProfilerSetConfig);
  KTUNE_DETAIL_CUPTI(cuptiRangeProfilerStart);
  KTUNE_DETAIL_CUPTI(cuptiRangeProfilerStop);
  KTUNE_DETAIL_CUPTI(cuptiRangeProfilerPushRange);
  KTUNE_DETAIL_CUPTI(cuptiRangeProfilerPopRange);
  KTUNE_DETAIL_CUPTI(cuptiRangeProfilerDecodeData);
  KTUNE_DETAIL_CUPTI(cuptiRangeProfilerGetCounterDataInfo);
  KTUNE_DETAIL_CUPTI(cuptiRangeProfilerCounterDataGetRangeInfo);
#undef KTUNE_DETAIL_CUPTI
}

LoadedCupti& loaded() {
  // Never destroyed: CUPTI stays mapped until exit (its callbacks may still be registered).
  static LoadedCupti* const instance = [] {
    auto* c = new LoadedCupti;
    try {
      load(*c);
    } catch (const Error& e) {
      c->error = e.what();
    }
    return c;
  }();
  return *instance;
}

}  // namespace

const CuptiApi* cupti_or_null(std::string* why) {
  const LoadedCupti& c = loaded();
  if (c.error) {
    if (why != nullptr) *why = *c.error;
    return nullptr;
  }
  return &c.api;
}

void throw_cupti_error(CUptiResult r, const char* call, const char* where) {
  std::string name = fmt::format("CUptiResult {}", static_cast<int>(r));
  std::string description;
  if (const CuptiApi* api = cupti_or_null(); api != nullptr) {
    const char* s = nullptr;
    if (api->cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s != nullptr) name = s;
    const char* m = nullptr;
    if (api->cuptiGetErrorMessage(r, &m) == CUPTI_SUCCESS && m != nullptr) description = m;
  }
  throw_api_error(ErrorKind::kRuntime, name, static_cast<long long>(r), description, call, where);
}

}  // namespace ktune::harness
