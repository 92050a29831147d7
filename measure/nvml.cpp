#include "measure/nvml.hpp"

#include <dlfcn.h>

#include <mutex>

#include <fmt/format.h>

namespace ktune::measure {

namespace {
// The few NVML declarations used, from nvml.h (not shipped with the toolkit headers).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;         // NVML_CLOCK_SM
constexpr int kNvmlTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU

struct Nvml {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*by_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  std::string why;  ///< non-empty when unusable
};

const Nvml& nvml() {
  static Nvml api;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      api.why = fmt::format("cannot open libnvidia-ml.so.1 (NVML): {}", e ? e : "?");
      return;
    }
    api.init = reinterpret_cast<nvmlReturn_t (*)()>(dlsym(h, "nvmlInit_v2"));
    api.by_bus_id = reinterpret_cast<nvmlReturn_t (*)(const char*, nvmlDevice_t*)>(
        dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2"));
    api.clock =
        reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, int, unsigned*)>(dlsym(h, "nvmlDeviceGetClockInfo"));
    api.temperature = reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, int, unsigned*)>(
        dlsym(h, "nvmlDeviceGetTemperature"));
    api.error_string = reinterpret_cast<const char* (*)(nvmlReturn_t)>(dlsym(h, "nvmlErrorString"));
    if (!api.init || !api.by_bus_id || !api.clock || !api.temperature) {
      api.why = "libnvidia-ml.so.1 lacks nvmlInit_v2/nvmlDeviceGetHandleByPciBusId_v2/ClockInfo/Temperature";
      return;
    }
    if (const nvmlReturn_t r = api.init(); r != kNvmlSuccess) {
      api.why =
          fmt::format("nvmlInit_v2 failed: {}", api.error_string ? api.error_string(r) : std::to_string(r));
    }
  });
  return api;
}
}  // namespace

NvmlReading nvml_read(const std::string& pci_bus_id) noexcept {
  NvmlReading out;
  try {
    const Nvml& api = nvml();
    if (!api.why.empty()) {
      out.unknown_reason = api.why;
      return out;
    }
    auto err = [&](nvmlReturn_t r) {
      return api.error_string ? std::string(api.error_string(r)) : std::to_string(r);
    };
    nvmlDevice_t dev = nullptr;
    if (const nvmlReturn_t r = api.by_bus_id(pci_bus_id.c_str(), &dev); r != kNvmlSuccess) {
      out.unknown_reason = fmt::format("NVML has no device at PCI bus id '{}': {}", pci_bus_id, err(r));
      return out;
    }
    unsigned v = 0;
    if (const nvmlReturn_t r = api.clock(dev, kNvmlClockSm, &v); r == kNvmlSuccess) {
      out.sm_clock_mhz = v;
    } else {
      out.unknown_reason = fmt::format("nvmlDeviceGetClockInfo: {}", err(r));
    }
    if (const nvmlReturn_t r = api.temperature(dev, kNvmlTemperatureGpu, &v); r == kNvmlSuccess) {
      out.temperature_c = v;
    } else {
      out.unknown_reason +=
          fmt::format("{}nvmlDeviceGetTemperature: {}", out.unknown_reason.empty() ? "" : "; ", err(r));
    }
  } catch (...) {
    out.unknown_reason = "NVML query failed";
  }
  return out;
}

}  // namespace ktune::measure
