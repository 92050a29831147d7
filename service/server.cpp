#include "service/server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <regex>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>

#include "cache/config_cache.hpp"
#include "harness/device_info.hpp"
#include "ktune/error.hpp"
#include "service/auth.hpp"
#include "service/bounded_task_queue.hpp"
#include "service/job_runner.hpp"
#include "service/listen_address.hpp"
#include "service/metrics.hpp"
#include "service/reader_pool.hpp"
#include "service/routes.hpp"
#include "service/service_context.hpp"
#include "service/tls_files.hpp"
#include "tuner/device_list.hpp"
#include "tuner/spec_work.hpp"

namespace ktune::service {
namespace {

/// Read-only database handles the request threads share (a lookup holds one for tens of
/// microseconds; 8 keep 64 connections from queueing on one handle on a 2-core box).
constexpr size_t kMaxReaders = 8;
/// Requests one keep-alive connection may make before the server closes it.
constexpr size_t kKeepAliveMaxRequests = 100000;
/// Connections the kernel queues before they are accepted. cpp-httplib 0.11 listens with 5: 64
/// clients connecting at once then saw 1 s SYN retransmits (docs/perf/service.md); 1024 covers
/// --threads plus the accepted queue many times over (the kernel caps it at net.core.somaxconn).
constexpr int kListenBacklog = 1024;

/// Every route's path, to tell "wrong method" (405) from "no such route" (404).
const std::vector<std::regex>& known_paths() {
  static const std::vector<std::regex> kPaths = {std::regex("/"),
                                                 std::regex("/metrics"),
                                                 std::regex("/v1/health"),
                                                 std::regex("/v1/version"),
                                                 std::regex("/v1/devices"),
                                                 std::regex("/v1/best"),
                                                 std::regex("/v1/best:batch"),
                                                 std::regex("/v1/results"),
                                                 std::regex("/v1/report"),
                                                 std::regex("/v1/jobs"),
                                                 std::regex(R"(/v1/jobs/\d{1,64})"),
                                                 std::regex(R"(/v1/jobs/\d{1,64}/events)")};
  return kPaths;
}

std::vector<int> job_devices(const std::string& text) {
  if (text == "none") return {};
  int count = 0;
  try {
    count = harness::device_count();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kNoDevice || text != "all") throw;
    return {};  // no GPU here: compile-only jobs only
  }
  return tuner::parse_device_list(text, count);
}

/// Lengthens the listen queue of the socket cpp-httplib bound to `port`: Linux takes a second
/// listen() on a listening socket as a new backlog. `candidates` are the sockets cpp-httplib
/// created while binding (the socket-options hook saw them); those it closed again, and any other
/// socket that now has the same number, are told apart by asking each whether it is listening on
/// `port`. False when none is.
bool raise_listen_backlog(const std::vector<int>& candidates, int port) {
  for (const int fd : candidates) {
    int listening = 0;
    socklen_t length = sizeof listening;
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0 || listening == 0) continue;
    sockaddr_storage address{};
    length = sizeof address;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) continue;
    int bound = -1;
    if (address.ss_family == AF_INET) bound = ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
    if (address.ss_family == AF_INET6)
      bound = ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
    if (bound == port && ::listen(fd, kListenBacklog) == 0) return true;
  }
  return false;
}

std::filesystem::path make_scratch_dir() {
  std::string templ = (std::filesystem::temp_directory_path() / "ktune-serve-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr)
    throw Error(ErrorKind::kRuntime, fmt::format("cannot make a scratch folder like {}", templ));
  return templ;
}

}  // namespace

struct Server::State {
  ServeOptions options;
  ListenAddress address;
  std::optional<cache::ConfigCache> writer;
  std::unique_ptr<ReaderPool> readers;
  Metrics metrics;
  std::unique_ptr<JobRunner> jobs;
  ServiceContext ctx;
  std::unique_ptr<httplib::Server> http;
  int port = 0;
  std::once_flag stopped;

  ~State() {
    std::error_code ec;
    if (!ctx.scratch_dir.empty()) std::filesystem::remove_all(ctx.scratch_dir, ec);
  }
};

Server::Server(const ServeOptions& o) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.options = o;
  s.address = parse_listen_address(o.listen);
  if (o.threads == 0 || o.threads > 4096)
    throw Error(ErrorKind::kBadInput, "--threads must be from 1 to 4096");
  if (o.max_body_bytes == 0) throw Error(ErrorKind::kBadInput, "--max-body-bytes must be at least 1");
  if (o.tls_cert.has_value() != o.tls_key.has_value())
    throw Error(ErrorKind::kBadInput, "--tls-cert and --tls-key go together");
  if (o.tls_cert) check_tls_files(*o.tls_cert, *o.tls_key);
  if (o.token_file) s.ctx.token = read_token_file(*o.token_file);
  if (!s.address.loopback() && !s.ctx.token) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("--listen {} is reachable from other machines: give --token-file FILE (a token "
                            "only you can read) or listen on 127.0.0.1",
                            s.address.text()));
  }

  s.ctx.db_path = o.db;
  s.ctx.read_only = o.read_only;
  s.ctx.chart_js = o.chart_js;
  s.ctx.gpu_sensors = o.gpu_sensors;
  if (!o.read_only) {
    s.writer.emplace(
        cache::ConfigCache::open(o.db, cache::ConfigCache::Mode::kReadWrite, tuner::spec_work_model()));
    s.ctx.writer = &*s.writer;
  }
  s.readers = std::make_unique<ReaderPool>(o.db, std::min(o.threads, kMaxReaders));
  s.ctx.readers = s.readers.get();
  s.ctx.metrics = &s.metrics;
  s.ctx.scratch_dir = make_scratch_dir();
  if (!o.read_only) {
    s.jobs = std::make_unique<JobRunner>(o.db, *s.writer, job_devices(o.devices));
    s.ctx.jobs = s.jobs.get();
  }

  if (o.tls_cert) {
    auto tls = std::make_unique<httplib::SSLServer>(o.tls_cert->c_str(), o.tls_key->c_str());
    if (!tls->is_valid()) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("--tls-cert {} / --tls-key {}: not a usable certificate and key",
                              o.tls_cert->string(), o.tls_key->string()));
    }
    s.http = std::move(tls);
  } else {
    s.http = std::make_unique<httplib::Server>();
  }
  httplib::Server& http = *s.http;
  const size_t threads = o.threads;
  const size_t max_queue = o.max_queue;
  http.new_task_queue = [threads, max_queue] { return new BoundedTaskQueue(threads, max_queue); };
  auto bound_sockets = std::make_shared<std::vector<int>>();
  http.set_socket_options([bound_sockets](socket_t sock) {
    bound_sockets->push_back(sock);
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    // No Nagle delay: an answer's headers and body leave at once (accepted sockets inherit it);
    // with it, a small answer could wait 40 ms for the client's delayed ACK.
    ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  });
  http.set_payload_max_length(o.max_body_bytes);
  http.set_read_timeout(o.read_timeout_s, 0);
  http.set_write_timeout(o.write_timeout_s, 0);
  http.set_keep_alive_timeout(5);
  http.set_keep_alive_max_count(kKeepAliveMaxRequests);
  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    // An answer cpp-httplib gave before any route ran may leave the request's body unread, which
    // would then be taken for the next request: end such a connection after the answer.
    if (req.has_header("Content-Length") || req.has_header("Transfer-Encoding"))
      res.set_header("Connection", "close");
    const bool known_method = req.method == "GET" || req.method == "POST" || req.method == "DELETE";
    if (res.status == 404 || (res.status == 400 && !known_method)) {
      for (const auto& path : known_paths()) {
        if (std::regex_match(req.path, path)) {
          res.status = 405;
          send_error(res, 405, "method_not_allowed",
                     fmt::format("{} does not answer {}", req.path, req.method));
          return;
        }
      }
      send_error(res, 404, "not_found",
                 fmt::format("no route {} {} (docs/service.md lists them)", req.method, req.path));
      return;
    }
    if (res.status == 413) {
      // The unread body would be taken for the next request: end the connection after the answer.
      res.set_header("Connection", "close");
      send_error(res, 413, "too_large", "the request body is larger than this server's --max-body-bytes");
      return;
    }
    send_error(res, res.status, kind_for_status(res.status),
               fmt::format("the request could not be answered (HTTP {})", res.status));
  });
  // Refuse a body announced as too large before reading it (cpp-httplib would first read and
  // discard it, holding a thread until the read timeout).
  const size_t max_body = o.max_body_bytes;
  http.set_pre_routing_handler([max_body](const httplib::Request& req, httplib::Response& res) {
    if (!req.has_header("Content-Length")) return httplib::Server::HandlerResponse::Unhandled;
    const std::string length = req.get_header_value("Content-Length");
    const bool too_long = length.size() > 19 || length.find_first_not_of("0123456789") != std::string::npos ||
                          std::stoull(length.empty() ? std::string("0") : length) > max_body;
    if (!too_long) return httplib::Server::HandlerResponse::Unhandled;
    res.set_header("Connection", "close");
    send_error(res, 413, "too_large",
               length.find_first_not_of("0123456789") != std::string::npos
                   ? "the Content-Length header is not a number"
                   : "the request body is larger than this server's --max-body-bytes");
    return httplib::Server::HandlerResponse::Handled;
  });
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    send_error(res, 500, "internal", "the server failed answering this request");
  });
  http.set_logger([&s](const httplib::Request&, const httplib::Response& res) {
    s.metrics.count_request(take_route_label(), res.status);
  });
  add_dashboard_routes(http, s.ctx);
  add_info_routes(http, s.ctx);
  add_lookup_routes(http, s.ctx);
  add_result_routes(http, s.ctx);
  add_report_routes(http, s.ctx);
  add_job_routes(http, s.ctx);

  if (s.address.port == 0) {
    s.port = http.bind_to_any_port(s.address.host);
    if (s.port <= 0) throw Error(ErrorKind::kRuntime, fmt::format("cannot listen on {}", s.address.text()));
  } else {
    if (!http.bind_to_port(s.address.host, s.address.port))
      throw Error(
          ErrorKind::kRuntime,
          fmt::format("cannot listen on {} (in use, or not an address of this machine)", s.address.text()));
    s.port = s.address.port;
  }
  if (!raise_listen_backlog(*bound_sockets, s.port)) {
    fmt::print(stderr,
               "ktune serve: warning: the listen backlog stays at cpp-httplib's 5 (the listening "
               "socket was not found); many clients connecting at once may wait 1 s\n");
  }
  if (s.jobs) s.jobs->resume_interrupted();
}

Server::~Server() { stop(); }

int Server::port() const { return state_->port; }

std::string Server::url() const {
  ListenAddress a = state_->address;
  a.port = state_->port;
  return fmt::format("{}://{}", state_->options.tls_cert ? "https" : "http", a.text());
}

bool Server::run() { return state_->http->listen_after_bind(); }

void Server::stop() {
  State& s = *state_;
  std::call_once(s.stopped, [&s] {
    if (s.jobs) s.jobs->events().shutdown();  // event streams end, so their threads are free
    if (s.http) s.http->stop();
    if (s.jobs) s.jobs->stop();
  });
}

}  // namespace ktune::service
