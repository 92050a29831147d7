#pragma once
// Whether this machine has a usable GPU, for the gpu suites' skip messages.

#include <string>

#include "harness/device_info.hpp"
#include "ktune/error.hpp"

namespace ktune::measure::test {

/// "" when a GPU is usable, else why not.
inline std::string no_gpu_reason() {
  try {
    if (harness::device_count() > 0) return "";
    return "the driver reports no CUDA device";
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace ktune::measure::test
