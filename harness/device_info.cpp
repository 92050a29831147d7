#include "harness/device_info.hpp"

#include <fmt/format.h>

#include <array>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"
#include "ktune/error.hpp"

namespace ktune::harness {
namespace {

std::string format_uuid(const CUuuid& uuid) {
  std::string hex;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) hex += '-';
    hex += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
  }
  return "GPU-" + hex;
}

}  // namespace

std::string DeviceInfo::arch() const { return fmt::format("sm_{}{}", cc_major, cc_minor); }

int device_count() {
  const DriverApi& api = driver();
  int count = 0;
  KTUNE_CU_CHECK(api.cuDeviceGetCount(&count));
  if (count == 0) {
    throw Error(ErrorKind::kNoDevice, fmt::format("the NVIDIA driver ({}) sees no CUDA device", api.library),
                "CUDA_ERROR_NO_DEVICE");
  }
  return count;
}

DeviceInfo query_device(int ordinal) {
  const int count = device_count();
  if (ordinal < 0 || ordinal >= count) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("device {} does not exist: the driver sees {} device(s), numbered 0..{}", ordinal,
                            count, count - 1));
  }
  const DriverApi& api = driver();
  CUdevice dev = 0;
  KTUNE_CU_CHECK(api.cuDeviceGet(&dev, ordinal));
  auto attr = [&](CUdevice_attribute a) {
    int value = 0;
    KTUNE_CU_CHECK(api.cuDeviceGetAttribute(&value, a, dev));
    return value;
  };

  DeviceInfo d;
  d.ordinal = ordinal;
  std::array<char, 256> name{};
  KTUNE_CU_CHECK(api.cuDeviceGetName(name.data(), static_cast<int>(name.size()), dev));
  d.name = name.data();
  CUuuid uuid{};
  KTUNE_CU_CHECK(api.cuDeviceGetUuid(&uuid, dev));
  d.uuid = format_uuid(uuid);
  std::array<char, 64> bus{};
  KTUNE_CU_CHECK(api.cuDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), dev));
  d.pci_bus_id = bus.data();
  std::size_t total = 0;
  KTUNE_CU_CHECK(api.cuDeviceTotalMem(&total, dev));
  d.memory_bytes = static_cast<int64_t>(total);

  d.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  d.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  d.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  d.l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  d.smem_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  d.smem_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  d.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  d.max_regs_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  d.regs_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  d.warp_size = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  d.sm_clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  d.mem_clock_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  d.mem_bus_width_bits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  d.driver_version = api.driver_version;
  return d;
}

nlohmann::json to_json(const DeviceInfo& d) {
  return nlohmann::json{
      {"ordinal", d.ordinal},
      {"name", d.name},
      {"uuid", d.uuid},
      {"pci_bus_id", d.pci_bus_id},
      {"arch", d.arch()},
      {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
      {"cc_major", d.cc_major},
      {"cc_minor", d.cc_minor},
      {"sm_count", d.sm_count},
      {"memory_bytes", d.memory_bytes},
      {"l2_bytes", d.l2_bytes},
      {"smem_per_block_optin", d.smem_per_block_optin},
      {"smem_per_sm", d.smem_per_sm},
      {"max_threads_per_block", d.max_threads_per_block},
      {"max_regs_per_block", d.max_regs_per_block},
      {"regs_per_sm", d.regs_per_sm},
      {"warp_size", d.warp_size},
      {"sm_clock_khz", d.sm_clock_khz},
      {"mem_clock_khz", d.mem_clock_khz},
      {"mem_bus_width_bits", d.mem_bus_width_bits},
      {"driver_version", d.driver_version},
  };
}

}  // namespace ktune::harness
