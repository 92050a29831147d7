#pragma once
/// Hardware counters from the CUDA 13 CUPTI range profiler (kernel replay, auto range), in a pass
/// of its own, never during timed samples (docs/measurement.md "Timing protocol"). Call order as seen working
/// on the H200 (docs/perf/measurement.md). Counters are optional: when CUPTI is missing, the device is
/// unsupported, or a metric is unknown, the result says unavailable with the reason and the
/// measurement goes on.

#include <cuda.h>

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ktune::measure {

/// Profiles what `launch_once` enqueues (one run of a candidate's launch sequence, then it must
/// synchronise) on device `ordinal` with context `ctx`. Over the kernels of the run, ".sum" metrics
/// add and the others are duration-weighted means. Returns
///   {"available":true,"metrics":{"<metric>":value,...},"passes":N,"ranges":R,"ms":setup+collect}
/// or {"available":false,"reason":"..."}. Never throws for CUPTI's sake; a CUDA error raised by
/// `launch_once` itself propagates (the kernel faulted).
nlohmann::json profile_counters(CUcontext ctx, int ordinal, const std::vector<std::string>& metrics,
                                const std::function<void()>& launch_once);

}  // namespace ktune::measure
