#pragma once
/// `ktune tune --devices all|0,2,...`: the GPUs whose workers measure a sweep's candidates in
/// parallel (tuner/loop/device_pool_measurer.hpp).

#include <functional>
#include <string_view>
#include <vector>

#include "harness/device_info.hpp"

namespace ktune::tuner {

/// The ordinals `text` names: "all" (0 .. device_count - 1) or a comma list of distinct ordinals,
/// each below `device_count`. `workers_per_device` > 1 repeats each (a test-only setting: workers
/// sharing a GPU disturb each other's timing). Throws ktune::Error(kBadInput) naming the bad part,
/// kNoDevice when the machine has no device.
std::vector<int> parse_device_list(std::string_view text, int device_count, int workers_per_device = 1);

/// Checks that the GPUs of `devices` (ordinals, as parse_device_list gives them) are one model:
/// candidates of one key are spread over them, so a different name, SM count, compute capability
/// or clock would mix results under one GPU key. `query` reads a device (harness::query_device;
/// tests pass a fake). Returns the first device's info; throws ktune::Error(kBadInput) naming the
/// two devices that differ.
harness::DeviceInfo check_one_model(int first, const std::vector<int>& devices,
                                    const std::function<harness::DeviceInfo(int)>& query);

}  // namespace ktune::tuner
