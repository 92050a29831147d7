#pragma once
/// What a config space's expressions may refer to besides the parameters: the problem's
/// dimensions, the element size of the dtype and the device's limits. One ProblemContext is one
/// (shape, dtype, device) for which a space is enumerated.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ktune/dtype.hpp"

namespace ktune::tuner {

/// Per-block and per-device limits. The defaults are the H200's (sm_90; docs/perf/measurement.md).
struct DeviceLimits {
  int64_t max_smem_per_block = 232448;  ///< opt-in shared memory per block, bytes (227 KiB)
  int64_t max_threads_per_block = 1024;
  int64_t max_regs_per_block = 65536;  ///< 32-bit registers
  int64_t max_regs_per_thread = 255;
  int64_t sm_count = 132;
  int64_t warp_size = 32;
};

/// The variables every expression may use, in the order they are bound (documented in
/// docs/config-spaces.md): elem_bytes, then the DeviceLimits fields under their own names.
inline constexpr std::string_view kContextVariables[] = {
    "elem_bytes", "max_smem_per_block", "max_threads_per_block", "max_regs_per_block", "max_regs_per_thread",
    "sm_count",   "warp_size",
};

/// One (shape, dtype, device) to enumerate a space for.
struct ProblemContext {
  std::vector<std::pair<std::string, int64_t>> dims;  ///< e.g. {{"m",16},{"n",4096},{"k",4096}}
  int64_t elem_bytes = 2;                             ///< bytes of one input element (size_of)
  /// The dtype. A space of a kernel with templates needs it: their specs' rules depend on it
  /// (ConfigSpace::enumerate).
  std::optional<DType> dtype;
  /// The kernel's layout/mode ("nt", "nn" for gemm); a template that lists its layouts is
  /// skipped for any other. "" matches every template.
  std::string layout;
  DeviceLimits limits;
};

}  // namespace ktune::tuner
