#pragma once
/// The pieces of one candidate on the device: its buffer sets (set 0 is verified; more sets exist
/// for FlushMode::kRotate) and a loaded kernel with its packed arguments, ready to launch (a
/// candidate's whole launch sequence: candidate_sequence.hpp).

#include <cuda.h>

#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/device_buffer.hpp"
#include "harness/device_info.hpp"
#include "harness/module.hpp"
#include "measure/candidate.hpp"

namespace ktune::measure {

/// One copy of every buffer a candidate names. Each allocation holds the buffer between two guard
/// regions (buffer_guard.hpp); at() is the buffer's own start.
struct BufferSet {
  std::map<std::string, harness::DeviceBuffer> buffers;
  CUdeviceptr at(const std::string& name) const;  ///< throws Error(kBadInput) for an unknown name
};

/// Allocates every buffer of `specs` (uninitialised) between its guards.
BufferSet allocate_buffers(const std::vector<BufferSpec>& specs);
/// A copy of `from` (cuMemcpyDtoDAsync on `stream`).
BufferSet clone_buffers(const BufferSet& from, CUstream stream);

/// A loaded kernel, its launch geometry and its arguments packed per buffer set.
class LoadedKernel {
 public:
  /// Loads `spec.cubin`, finds `spec.function`, opts in to > 48 KiB dynamic shared memory.
  LoadedKernel(const LaunchSpec& spec, const harness::DeviceInfo& device);
  /// The same with `spec.cubin` already loaded as `module` (shared by the launches of a sequence).
  LoadedKernel(const LaunchSpec& spec, std::shared_ptr<const harness::Module> module,
               const harness::DeviceInfo& device);

  /// "" when the launch fits the device and the kernel; else why it exceeds the limits.
  std::string limit_violation() const { return violation_; }
  /// Registers, shared and local memory, max threads per block, blocks per SM.
  nlohmann::json resources() const { return resources_; }

  /// Packs the arguments once per buffer set (call before launching on those sets).
  void bind(const std::vector<const BufferSet*>& sets);
  /// Enqueues one launch on `stream` with the arguments bound to set `set`.
  void launch(std::size_t set, CUstream stream);
  CUfunction function() const { return function_; }
  /// The lowered name it was found by.
  const std::string& function_name() const { return spec_.function; }

 private:
  /// One argument's bytes: 8 for pointers and scalars, 128 (64-byte aligned) for a tensor map.
  struct alignas(64) Slot {
    std::array<std::byte, 128> bytes;
  };
  struct Packed {
    std::vector<Slot> slots;
    std::vector<void*> pointers;
  };
  LaunchSpec spec_;
  std::shared_ptr<const harness::Module> module_;
  CUfunction function_ = nullptr;
  std::string violation_;
  nlohmann::json resources_ = nlohmann::json::object();
  std::vector<Packed> packed_;
};

}  // namespace ktune::measure
