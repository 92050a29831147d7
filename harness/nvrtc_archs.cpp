#include "harness/nvrtc_archs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string>

#include "harness/cuda_check.hpp"
#include "harness/nvrtc_api.hpp"
#include "ktune/error.hpp"

namespace ktune::harness {

std::vector<int> nvrtc_supported_archs() {
  const NvrtcApi& api = nvrtc();
  int count = 0;
  KTUNE_NVRTC_CHECK(api.nvrtcGetNumSupportedArchs(&count), "");
  std::vector<int> archs(static_cast<size_t>(std::max(count, 0)));
  if (!archs.empty()) KTUNE_NVRTC_CHECK(api.nvrtcGetSupportedArchs(archs.data()), "");
  return archs;
}

void require_nvrtc_arch(std::string_view arch) {
  // sm_<digits> with an optional architecture-specific (a) or family (f) suffix.
  std::string_view digits = arch.starts_with("sm_") ? arch.substr(3) : std::string_view{};
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) digits.remove_suffix(1);
  int cc = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), cc);
  const bool parsed = !digits.empty() && ec == std::errc{} && end == digits.data() + digits.size();
  const std::vector<int> supported = nvrtc_supported_archs();
  if (parsed && std::find(supported.begin(), supported.end(), cc) != supported.end()) return;
  std::string list;
  for (const int s : supported) list += fmt::format("{}sm_{}", list.empty() ? "" : ", ", s);
  throw Error(ErrorKind::kBadInput,
              fmt::format("architecture '{}' is not one NVRTC {}.{} can compile for; it supports {}", arch,
                          nvrtc().version_major, nvrtc().version_minor, list));
}

}  // namespace ktune::harness
