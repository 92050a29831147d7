#pragma once
/// Pruning after compiling: the resources NVRTC/the driver report for a compiled kernel, checked
/// against the device's limits. A config that cannot launch gets outcome `exceeds_limits` with the
/// reason, instead of a failed launch. Also the deterministic tie-break among configs whose times
/// are within measurement noise (docs/design.md "Names and outcomes": fewer resources, then name order).

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "tuner/space/problem_context.hpp"

namespace ktune::tuner {

/// What one compiled kernel uses per launch (cuFuncGetAttribute plus the launch configuration).
struct Resources {
  int64_t registers_per_thread = 0;  ///< CU_FUNC_ATTRIBUTE_NUM_REGS
  int64_t threads_per_block = 0;     ///< the block size the config launches with
  int64_t static_smem_bytes = 0;     ///< CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
  int64_t dynamic_smem_bytes = 0;    ///< requested at launch
  int64_t local_bytes = 0;           ///< CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES (spills), not a limit
  /// CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK (0 = unknown): what this kernel can launch with.
  int64_t max_threads_for_function = 0;
};

/// Registers a block really occupies: per warp, registers are allocated in units of 256
/// (8 a thread for 32 lanes on sm_50 .. sm_90, CUDA occupancy calculator).
int64_t registers_per_block(const Resources& r, const DeviceLimits& limits);

/// Why `r` cannot launch on a device with `limits`, or nullopt when it can. Checks threads per
/// block (device and function limit), registers per thread and per block, and shared memory.
std::optional<std::string> exceeds_limits(const Resources& r, const DeviceLimits& limits);

/// A measured config for the tie-break.
struct Contender {
  std::string name;  ///< canonical config name
  double median_us = 0;
  Resources resources;
  /// Among ties of equal footprint, lower first: a library algorithm's rank in the vendor's
  /// heuristic (0: what the library itself would run), 0 for a template.
  int64_t preference = 0;
};

/// Resource footprint used to break ties: register bytes a block occupies plus its shared memory.
int64_t footprint_bytes(const Resources& r, const DeviceLimits& limits);

/// The winner among `contenders` (non-empty): every contender within `relative_noise` of the
/// fastest median is a tie, and among those the smallest footprint wins, then the lower
/// preference, then the smaller name.
/// The same inputs give the same winner on every machine. Returns its index.
size_t pick_winner(std::span<const Contender> contenders, const DeviceLimits& limits, double relative_noise);

}  // namespace ktune::tuner
