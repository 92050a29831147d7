#pragma once
/// The process metrics of the Prometheus client conventions (process_cpu_seconds_total,
/// process_resident_memory_bytes, process_virtual_memory_bytes, process_start_time_seconds,
/// process_open_fds, process_max_fds), read from /proc/self, and ktune_build_info: what a
/// dashboard needs to tell one server's process and build from another's.

#include <string>
#include <string_view>

namespace ktune::service {

/// The process_* metrics in Prometheus text format; a value /proc does not give is left out.
std::string process_metrics_text();

/// `ktune_build_info{version="..",api="..",schema=".."} 1`, with its HELP and TYPE lines.
std::string build_info_text(std::string_view version, int api_version, int schema_version);

}  // namespace ktune::service
