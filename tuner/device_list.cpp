#include "tuner/device_list.hpp"

#include <algorithm>
#include <charconv>
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

}  // namespace ktune::tuner
