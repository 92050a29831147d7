#include "service/process_metrics.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "service/metrics.hpp"

namespace ktune::service {
namespace {

/// The fields of /proc/self/stat after the command name (which may hold spaces and parentheses):
/// field 3 (state) is [0].
std::vector<std::string> stat_fields() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  std::getline(in, line);
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> out;
  for (std::string f; rest >> f;) out.push_back(f);
  return out;
}

/// Seconds since the epoch at boot (/proc/stat's btime).
std::optional<double> boot_time() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double t = 0;
      if (in >> t) return t;
      return std::nullopt;
    }
    in.ignore(1 << 20, '\n');
  }
  return std::nullopt;
}

void gauge(std::string& out, const char* name, const char* type, const char* help, double value) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name, value);
}

}  // namespace

std::string process_metrics_text() {
  std::string out;
  const auto f = stat_fields();
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  // /proc/[pid]/stat: utime 14, stime 15, starttime 22, vsize 23, rss 24 (1-based; [0] is field 3).
  if (f.size() >= 22 && ticks > 0) {
    gauge(out, "process_cpu_seconds_total", "counter", "User and system CPU time spent, in seconds.",
          (std::stod(f[11]) + std::stod(f[12])) / ticks);
    if (const auto boot = boot_time()) {
      gauge(out, "process_start_time_seconds", "gauge",
            "Start time of the process since the epoch, in seconds.", *boot + std::stod(f[19]) / ticks);
    }
    gauge(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size, in bytes.", std::stod(f[20]));
    gauge(out, "process_resident_memory_bytes", "gauge", "Resident memory size, in bytes.",
          std::stod(f[21]) * page);
  }
  std::error_code ec;
  size_t fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::end(it); it.increment(ec)) {
    ++fds;
  }
  if (!ec) gauge(out, "process_open_fds", "gauge", "Open file descriptors.", static_cast<double>(fds));
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    gauge(out, "process_max_fds", "gauge", "The limit of open file descriptors.",
          static_cast<double>(limit.rlim_cur));
  }
  return out;
}

std::string build_info_text(std::string_view version, int api_version, int schema_version) {
  return fmt::format(
      "# HELP ktune_build_info The server's build: ktune version, API version and database schema version.\n"
      "# TYPE ktune_build_info gauge\n"
      "ktune_build_info{{version=\"{}\",api=\"{}\",schema=\"{}\"}} 1\n",
      prometheus_label(std::string(version)), api_version, schema_version);
}

}  // namespace ktune::service
