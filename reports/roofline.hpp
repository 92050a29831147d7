#pragma once
/// The roofline of one measurement: the fastest time the GPU's measured ceilings allow for the
/// work stored with it (cache::Work, from the kernel's spec), compared with the time measured.
/// % of roofline = that lower bound / the measured median.

#include <optional>
#include <string>
#include <string_view>

#include "cache/config_cache.hpp"

namespace ktune::reports {

using cache::Work;

/// A GPU's ceilings that apply to one dtype, from GpuInfo::ceilings_json.
struct Ceilings {
  std::optional<double> tflops;  ///< peak math throughput for the dtype
  std::optional<double> gbps;    ///< peak DRAM bandwidth (a measured copy)
};

/// Reads the ceilings for `dtype` from a ceilings JSON object: "<dtype name>_tflops" (fp8 dtypes
/// also "fp8_tflops"; f32 also "fp32_tflops") and "copy_gbps" (else "dram_gbps"). Malformed JSON or
/// non-numeric values give empty fields, never an error: a report still shows the times.
Ceilings ceilings_for(std::string_view ceilings_json, DType dtype);

/// What limits a measurement, and how close it came.
struct Roofline {
  std::optional<double> tflops;          ///< achieved
  std::optional<double> gbps;            ///< achieved
  std::optional<double> pct_of_ceiling;  ///< 100 * (roofline time bound) / (median time)
  std::string bound;                     ///< "compute", "memory" or "" when no ceiling applies
};

/// Achieved throughput and % of roofline for `work` done in `median_us` under `ceilings`.
Roofline roofline(const Work& work, const Ceilings& ceilings, double median_us);

}  // namespace ktune::reports
