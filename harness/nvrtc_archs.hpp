#pragma once
/// The GPU architectures the loaded NVRTC can compile for (nvrtcGetSupportedArchs), and the check
/// that turns an architecture it does not know (`--arch sm_999`) into bad input that lists them,
/// instead of a sweep whose every candidate fails to compile.

#include <string_view>
#include <vector>

namespace ktune::harness {

/// The compute capabilities NVRTC supports, e.g. {75, 80, 86, ..., 120}, in NVRTC's order.
/// Throws Error(kNoDevice) when NVRTC cannot be loaded.
std::vector<int> nvrtc_supported_archs();

/// Checks that `arch` ("sm_90", "sm_90a", "sm_100f") names a compute capability NVRTC supports.
/// Throws Error(kBadInput) naming the architecture and listing the supported ones otherwise.
void require_nvrtc_arch(std::string_view arch);

}  // namespace ktune::harness
