#pragma once
/// SM clock and temperature through NVML (libnvidia-ml.so.1, opened at run time like every NVIDIA
/// library, D2). NVML is optional: where it is absent or refuses, readings are "unknown" (empty
/// optionals) with the reason, and measurement goes on.

#include <optional>
#include <string>

namespace ktune::measure {

struct NvmlReading {
  std::optional<double> sm_clock_mhz;   ///< current SM clock
  std::optional<double> temperature_c;  ///< GPU core temperature
  std::string unknown_reason;           ///< why a value is missing ("" when both are present)
};

/// Reads the device with PCI bus id `pci_bus_id` ("0000:3b:00.0", DeviceInfo::pci_bus_id; NVML
/// orders devices differently from CUDA, the bus id names the same card in both). Never throws.
NvmlReading nvml_read(const std::string& pci_bus_id) noexcept;

}  // namespace ktune::measure
