#pragma once
/// Device limits by architecture, for `ktune tune --compile-only --arch sm_XX` on a machine without
/// the GPU: the limits of the arch's best-known data-centre part (opt-in shared memory per block
/// from the CUDA C++ Programming Guide's compute capability table), or the H200's (DeviceLimits'
/// defaults) for an arch not listed, said so in the result.

#include <string>
#include <string_view>

#include "cache/config_cache.hpp"
#include "tuner/space/problem_context.hpp"

namespace ktune::tuner {

struct ArchLimits {
  DeviceLimits limits;
  std::string device;  ///< the part the limits are those of, e.g. "H100/H200"
  bool known = false;  ///< false: the stated default (sm_90's) was used
};

/// Limits for `arch` ("sm_80", "sm_90", ...). Throws ktune::Error(kBadInput) for a text that is not
/// sm_<digits>.
ArchLimits arch_limits(std::string_view arch);

/// The GPU row compile-only results are stored under: "compile-only sm_90", compute capability from
/// the arch, the limits' SM count, no memory size (it is not a real card, so resume and lookups of
/// real GPUs never see these rows; the compile cache is shared, keyed by arch).
cache::GpuInfo compile_only_gpu(std::string_view arch, const ArchLimits& limits);

}  // namespace ktune::tuner
