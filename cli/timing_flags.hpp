#pragma once
/// Every knob of measure::TimingOptions as a command-line flag, shared by `ktune bench` and
/// `ktune tune` (docs/measurement.md lists them with their defaults).

#include "measure/timing_options.hpp"

namespace CLI {
class App;
}

namespace ktune::cli {

/// Adds the timing flags to `cmd`, writing into `options` (which holds the defaults). Call
/// finish_timing_options() in the callback to apply the string-valued ones and validate.
struct TimingFlags {
  measure::TimingOptions options;
  std::string flush =
      std::string(measure::to_string(measure::TimingOptions{}.flush));  ///< the protocol's default
  std::string metrics;                                                  ///< comma list; "" keeps the defaults
};
void add_timing_flags(CLI::App& cmd, TimingFlags& flags);
/// Applies --flush and --metrics and validates; throws ktune::Error(kBadInput) naming a bad flag.
measure::TimingOptions finish_timing_options(const TimingFlags& flags);

}  // namespace ktune::cli
