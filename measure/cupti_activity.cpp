#include "measure/cupti_activity.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "harness/cuda_check.hpp"
#include "harness/cupti_api.hpp"

namespace ktune::measure {

namespace {
struct Record {
  std::string name;
  uint64_t start = 0;
  uint64_t end = 0;
};
std::mutex g_mutex;
std::vector<Record> g_records;
const harness::CuptiApi* g_api = nullptr;

constexpr std::size_t kBufferBytes = 8U << 20;  // 8 MiB: ~50k kernel records per buffer

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = kBufferBytes;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* rec = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    while (g_api && g_api->cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
      if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
        g_records.push_back({k->name ? k->name : "", k->start, k->end});
      }
    }
  }
  std::free(buffer);
}
}  // namespace

std::unique_ptr<ActivityTimer> ActivityTimer::start(std::string* why) {
  const harness::CuptiApi* api = harness::cupti_or_null(why);
  if (!api) return nullptr;
  static std::once_flag registered;
  static CUptiResult register_result = CUPTI_SUCCESS;
  std::call_once(registered, [&] {
    g_api = api;
    register_result = api->cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  });
  auto describe = [&](CUptiResult r, const char* call) {
    const char* s = nullptr;
    api->cuptiGetResultString(r, &s);
    return std::string(call) + " failed: " + (s ? s : "?");
  };
  if (register_result != CUPTI_SUCCESS) {
    if (why) *why = describe(register_result, "cuptiActivityRegisterCallbacks");
    return nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_records.clear();
  }
  if (const CUptiResult r = api->cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      r != CUPTI_SUCCESS) {
    if (why) *why = describe(r, "cuptiActivityEnable(CONCURRENT_KERNEL)");
    return nullptr;
  }
  std::unique_ptr<ActivityTimer> t(new ActivityTimer());
  t->enabled_ = true;
  return t;
}

ActivityTimer::~ActivityTimer() {
  if (enabled_ && g_api) g_api->cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

std::vector<double> ActivityTimer::stop(const std::string& function, std::size_t expected) {
  return stop(std::vector<std::string>{function}, expected);
}

std::vector<double> ActivityTimer::stop(const std::vector<std::string>& functions, std::size_t expected) {
  auto wanted = [&](const Record& r) {
    return std::find(functions.begin(), functions.end(), r.name) != functions.end();
  };
  auto matching = [&] {
    std::lock_guard<std::mutex> lock(g_mutex);
    return static_cast<std::size_t>(std::count_if(g_records.begin(), g_records.end(), wanted));
  };
  KTUNE_CUPTI_CHECK(g_api->cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  for (int tries = 0; tries < 20 && matching() < expected; ++tries) {  // 20 x 50 ms, as the probe needed
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    KTUNE_CUPTI_CHECK(g_api->cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  }
  KTUNE_CUPTI_CHECK(g_api->cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  enabled_ = false;
  std::vector<Record> records;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    records.swap(g_records);
  }
  std::sort(records.begin(), records.end(),
            [](const Record& a, const Record& b) { return a.start < b.start; });
  std::vector<double> us;
  for (const Record& r : records) {
    if (wanted(r)) us.push_back(static_cast<double>(r.end - r.start) * 1e-3);
  }
  return us;
}

}  // namespace ktune::measure
