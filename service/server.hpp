#pragma once
/// `ktune serve`: one process that answers lookups from the database over HTTP and runs tuning jobs
/// on this host's GPUs (docs/service.md). Server owns the HTTP listener (service/http_daemon.hpp
/// over libmicrohttpd, TLS when given a certificate), the routes, the database handles, the metrics
/// and the job runner.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "service/gpu_gauges.hpp"

namespace ktune::service {

struct ServeOptions {
  std::string listen = "127.0.0.1:8787";  ///< HOST:PORT; port 0 picks a free one
  std::filesystem::path db;
  std::optional<std::filesystem::path> token_file;
  std::string devices = "all";  ///< GPUs jobs measure on: "all", "none" or "0,1"
  bool read_only = false;
  size_t threads = 64;      ///< event-loop threads (each holds any number of connections)
  size_t max_queue = 4032;  ///< connections held beyond --threads (idle, slow or streaming ones too)
  size_t max_body_bytes = 64 * 1024 * 1024;  ///< a `ktune cache export` of a large sweep fits
  int read_timeout_s = 10;
  int write_timeout_s = 10;
  std::optional<std::filesystem::path> tls_cert;
  std::optional<std::filesystem::path> tls_key;
  std::string chart_js;         ///< Chart.js for HTML reports ("" = the default path)
  GpuSensorSource gpu_sensors;  ///< SM clock and temperature for /metrics (none: no such gauges)
};

class Server {
 public:
  /// Checks the options, opens the database (creating and migrating it unless read-only), re-queues
  /// jobs a previous server left running, and binds the port. Throws ktune::Error(kBadInput) for
  /// bad options (a non-loopback address without a token, a token file others can read, ...),
  /// kRuntime when the port cannot be bound.
  explicit Server(const ServeOptions& options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// The bound port (the kernel's pick when the options said 0).
  int port() const;
  /// "http://127.0.0.1:8787" (https with TLS).
  std::string url() const;
  /// Serves until stop(); returns false when listening failed.
  bool run();
  /// Graceful stop (thread-safe, idempotent): event streams end, no new connection is accepted,
  /// requests in flight finish, running jobs stop after their running candidate and are queued again.
  void stop();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace ktune::service
