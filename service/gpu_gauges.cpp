#include "service/gpu_gauges.hpp"

#include <utility>

#include <fmt/format.h>

namespace ktune::service {

std::string gpu_gauges_text(const GpuSensorSource& source, const std::vector<int>& gpus) {
  if (!source) return {};
  std::vector<std::pair<int, GpuSensorReading>> readings;
  readings.reserve(gpus.size());
  for (const int gpu : gpus) readings.emplace_back(gpu, source(gpu));

  std::string out;
  const auto family = [&](const char* name, const char* help, auto value) {
    std::string samples;
    for (const auto& [gpu, reading] : readings) {
      if (const std::optional<double> v = value(reading))
        samples += fmt::format("{}{{gpu=\"{}\"}} {}\n", name, gpu, *v);
    }
    if (samples.empty()) return;
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
    out += samples;
  };
  family("ktune_gpu_sm_clock_mhz", "Current SM clock of a GPU jobs measure on (NVML).",
         [](const GpuSensorReading& r) { return r.sm_clock_mhz; });
  family("ktune_gpu_temperature_celsius", "Core temperature of a GPU jobs measure on (NVML).",
         [](const GpuSensorReading& r) { return r.temperature_c; });
  return out;
}

}  // namespace ktune::service
