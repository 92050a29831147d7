#pragma once
/// The measurement layer's wall clock for deadlines and elapsed times: milliseconds of the steady
/// clock (monotonic; its zero is arbitrary, so only differences mean anything).

#include <chrono>

namespace ktune::measure {

inline double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace ktune::measure
