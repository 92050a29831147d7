#pragma once
/// The limits a config space's constraints and exceeds_limits() check, read from the device the
/// harness queried (header-only: uses only the DeviceInfo struct).

#include "harness/device_info.hpp"
#include "tuner/space/problem_context.hpp"

namespace ktune::tuner {

/// DeviceLimits of `device`: shared memory is the opt-in maximum (a kernel that needs more than
/// 48 KiB sets CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES); registers a thread stay at the
/// architectural 255 (sm_50 .. sm_90), which the driver does not report.
inline DeviceLimits device_limits(const harness::DeviceInfo& device) {
  DeviceLimits l;
  l.max_smem_per_block = device.smem_per_block_optin;
  l.max_threads_per_block = device.max_threads_per_block;
  l.max_regs_per_block = device.max_regs_per_block;
  l.sm_count = device.sm_count;
  l.warp_size = device.warp_size;
  return l;
}

}  // namespace ktune::tuner
