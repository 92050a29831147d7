#pragma once
/// The service's Prometheus metrics (`GET /metrics`, text format 0.0.4): requests by route and
/// status, and the latency of lookups as a histogram. Job gauges and candidate counters come from
/// the job runner and are appended by the route (service/info_routes.cpp).

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace ktune::service {

class Metrics {
 public:
  /// Upper bounds of the lookup latency buckets, in seconds (a lookup is one indexed SQLite query,
  /// tens of microseconds; the 2 ms target of docs/perf/service.md sits in the middle).
  static constexpr std::array<double, 10> kLatencyBuckets = {0.00005, 0.0001, 0.00025, 0.0005, 0.001,
                                                             0.002,   0.005,  0.01,    0.05,   0.25};

  /// One answered request; `route` is the route's pattern ("/v1/best"), "unmatched" for none.
  void count_request(const std::string& route, int status);
  /// One lookup's time (each key of a batch counts once).
  void observe_lookup(double seconds);
  /// The metrics in Prometheus text format.
  std::string render() const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::array<std::atomic<uint64_t>, kLatencyBuckets.size()> buckets_{};
  std::atomic<uint64_t> lookups_{0};
  std::atomic<uint64_t> lookup_nanos_{0};
};

/// `text` with backslash, quote and newline escaped, for a label value.
std::string prometheus_label(const std::string& text);

}  // namespace ktune::service
