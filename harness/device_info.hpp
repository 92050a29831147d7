#pragma once
/// What ktune knows about a GPU: the fields of the GPU key (name, compute capability, SM count, memory)
/// plus the limits and clocks the tuner and reports use. Read through the driver layer.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "ktune/error.hpp"

namespace ktune::harness {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  std::string uuid;        ///< "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" as nvidia-smi prints it
  std::string pci_bus_id;  ///< "0000:3b:00.0"
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int64_t memory_bytes = 0;
  int64_t l2_bytes = 0;
  int smem_per_block_optin = 0;  ///< bytes a block may use after cuFuncSetAttribute opt-in
  int smem_per_sm = 0;
  int max_threads_per_block = 0;
  int max_regs_per_block = 0;
  int regs_per_sm = 0;
  int warp_size = 0;
  int sm_clock_khz = 0;
  int mem_clock_khz = 0;
  int mem_bus_width_bits = 0;
  int driver_version = 0;  ///< cuDriverGetVersion, e.g. 13000

  /// NVRTC architecture name, e.g. "sm_90".
  std::string arch() const;
};

/// Number of CUDA devices. Throws Error(kNoDevice) with a clear message when there is no driver, the
/// driver cannot initialise, or it sees no device.
int device_count();

/// Everything about device `ordinal`. Throws Error(kBadInput) naming the ordinal and the device count
/// when it is out of range; kNoDevice as device_count().
DeviceInfo query_device(int ordinal);

/// All fields under their struct names, plus "arch" and "compute_capability" ("9.0").
nlohmann::json to_json(const DeviceInfo& info);

}  // namespace ktune::harness
