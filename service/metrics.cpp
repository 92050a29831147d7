#include "service/metrics.hpp"

#include <fmt/format.h>

namespace ktune::service {

std::string prometheus_label(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void Metrics::count_request(const std::string& route, int status) {
  std::lock_guard lock(mu_);
  ++requests_[{route, status}];
}

void Metrics::observe_lookup(double seconds) {
  for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
    if (seconds <= kLatencyBuckets[i]) {
      buckets_[i].fetch_add(1, std::memory_order_relaxed);
      break;
    }
  }
  lookups_.fetch_add(1, std::memory_order_relaxed);
  lookup_nanos_.fetch_add(static_cast<uint64_t>(seconds * 1e9), std::memory_order_relaxed);
}

std::string Metrics::render() const {
  std::string out =
      "# HELP ktune_http_requests_total HTTP requests answered, by route and status.\n"
      "# TYPE ktune_http_requests_total counter\n";
  {
    std::lock_guard lock(mu_);
    for (const auto& [key, count] : requests_) {
      out += fmt::format("ktune_http_requests_total{{route=\"{}\",status=\"{}\"}} {}\n",
                         prometheus_label(key.first), key.second, count);
    }
  }
  out +=
      "# HELP ktune_lookup_seconds Time to answer one best-config lookup.\n"
      "# TYPE ktune_lookup_seconds histogram\n";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    out += fmt::format("ktune_lookup_seconds_bucket{{le=\"{}\"}} {}\n", kLatencyBuckets[i], cumulative);
  }
  const uint64_t count = lookups_.load(std::memory_order_relaxed);
  out += fmt::format("ktune_lookup_seconds_bucket{{le=\"+Inf\"}} {}\n", count);
  out += fmt::format("ktune_lookup_seconds_sum {}\n",
                     static_cast<double>(lookup_nanos_.load(std::memory_order_relaxed)) / 1e9);
  out += fmt::format("ktune_lookup_seconds_count {}\n", count);
  return out;
}

}  // namespace ktune::service
