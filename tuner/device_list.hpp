#pragma once
/// `ktune tune --devices all|0,2,...`: the GPUs whose workers measure a sweep's candidates in
/// parallel (tuner/device_pool_measurer.hpp).

#include <string_view>
#include <vector>

namespace ktune::tuner {

/// The ordinals `text` names: "all" (0 .. device_count - 1) or a comma list of distinct ordinals,
/// each below `device_count`. `workers_per_device` > 1 repeats each (a test-only setting: workers
/// sharing a GPU disturb each other's timing). Throws ktune::Error(kBadInput) naming the bad part,
/// kNoDevice when the machine has no device.
std::vector<int> parse_device_list(std::string_view text, int device_count, int workers_per_device = 1);

}  // namespace ktune::tuner
