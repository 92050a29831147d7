#pragma once
/// The GPUs' SM clock and temperature as Prometheus gauges for `GET /metrics`
/// (`ktune_gpu_sm_clock_mhz{gpu="0"}`, `ktune_gpu_temperature_celsius{gpu="0"}`), one sample a GPU
/// that jobs measure on, read at each scrape, so a scrape during a job shows the clock and
/// temperature the job runs at. The readings come from a GpuSensorSource the command line gives the
/// server (NVML, measure/nvml.hpp: the service does not use the measurement layer itself); a value
/// the source cannot read is left out, never written as 0, so a host without a GPU or NVML has no
/// such gauge at all.

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ktune::service {

struct GpuSensorReading {
  std::optional<double> sm_clock_mhz;   ///< current SM clock
  std::optional<double> temperature_c;  ///< GPU core temperature
};

/// Reads the sensors of the GPU with this CUDA ordinal. Must not throw.
using GpuSensorSource = std::function<GpuSensorReading(int ordinal)>;

/// The gauges of `gpus` (CUDA ordinals) read through `source`, in Prometheus text format: each
/// family's HELP and TYPE lines then one sample a GPU that has the value; a family no GPU has a
/// value for is left out entirely ("" when there is nothing to show or no source).
std::string gpu_gauges_text(const GpuSensorSource& source, const std::vector<int>& gpus);

}  // namespace ktune::service
