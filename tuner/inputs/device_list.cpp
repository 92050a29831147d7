#include "tuner/inputs/device_list.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <string>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::tuner {

std::vector<int> parse_device_list(std::string_view text, int device_count, int workers_per_device) {
  if (workers_per_device < 1) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("workers a device must be at least 1, not {}", workers_per_device));
  }
  if (device_count < 1) {
    throw Error(ErrorKind::kNoDevice, fmt::format("--devices {}: this machine has no CUDA device", text));
  }
  std::vector<int> ordinals;
  if (text == "all") {
    for (int d = 0; d < device_count; ++d) ordinals.push_back(d);
  } else {
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t end = std::min(text.find(',', start), text.size());
      const std::string_view part = text.substr(start, end - start);
      int d = -1;
      const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), d);
      if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || d < 0) {
        throw Error(
            ErrorKind::kBadInput,
            fmt::format("--devices: '{}' is not a device ordinal (give all or a list such as 0,2)", part));
      }
      if (d >= device_count) {
        throw Error(
            ErrorKind::kBadInput,
            fmt::format("--devices: device {} does not exist (this machine has {})", d, device_count));
      }
      if (std::find(ordinals.begin(), ordinals.end(), d) != ordinals.end())
        throw Error(ErrorKind::kBadInput, fmt::format("--devices: device {} is listed twice", d));
      ordinals.push_back(d);
      start = end + 1;
    }
  }
  std::vector<int> out;
  for (int d : ordinals)
    for (int w = 0; w < workers_per_device; ++w) out.push_back(d);
  return out;
}

harness::DeviceInfo check_one_model(int first, const std::vector<int>& devices,
                                    const std::function<harness::DeviceInfo(int)>& query) {
  const harness::DeviceInfo dev = query(first);
  const std::set<int> distinct(devices.begin(), devices.end());
  for (int d : distinct) {
    if (d == first) continue;
    const harness::DeviceInfo other = query(d);
    if (other.name != dev.name || other.sm_count != dev.sm_count || other.cc_major != dev.cc_major ||
        other.cc_minor != dev.cc_minor || other.sm_clock_khz != dev.sm_clock_khz ||
        other.mem_clock_khz != dev.mem_clock_khz) {
      throw Error(
          ErrorKind::kBadInput,
          fmt::format("--devices: device {} is {} ({} SMs, sm_{}{}, {} / {} MHz) but device {} is {} ({} "
                      "SMs, sm_{}{}, {} / {} MHz): tune each GPU model in its own `ktune tune --devices "
                      "...` (the key holds the GPU)",
                      first, dev.name, dev.sm_count, dev.cc_major, dev.cc_minor, dev.sm_clock_khz / 1000,
                      dev.mem_clock_khz / 1000, d, other.name, other.sm_count, other.cc_major, other.cc_minor,
                      other.sm_clock_khz / 1000, other.mem_clock_khz / 1000));
    }
  }
  return dev;
}

}  // namespace ktune::tuner
