#include "service/server.hpp"

#include <stdlib.h>
#include <sys/resource.h>

#include <algorithm>
#include <condition_variable>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "cache/config_cache.hpp"
#include "harness/device_info.hpp"
#include "ktune/error.hpp"
#include "service/auth.hpp"
#include "service/http_daemon.hpp"
#include "service/job_runner.hpp"
#include "service/listen_address.hpp"
#include "service/metrics.hpp"
#include "service/reader_pool.hpp"
#include "service/routes.hpp"
#include "service/service_context.hpp"
#include "service/tls_files.hpp"
#include "tuner/inputs/device_list.hpp"
#include "tuner/space/spec_work.hpp"

namespace ktune::service {
namespace {

/// Read-only database handles the request threads share (a lookup holds one for tens of
/// microseconds; 8 keep 64 connections from queueing on one handle on a 2-core box).
constexpr size_t kMaxReaders = 8;
/// Connections the server holds open at most, whatever their state (idle, slow, streaming): the
/// open-file limit is raised toward its hard limit to fit them.
constexpr size_t kMaxConnections = 4096;

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

/// The open-file limit raised toward its hard limit (each connection is a descriptor); the
/// connections the server may then hold, leaving room for the database and the job workers.
size_t raise_open_file_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return 256;
  const rlim_t want = std::min<rlim_t>(r.rlim_max, kMaxConnections + 256);
  if (r.rlim_cur < want) {
    r.rlim_cur = want;
    ::setrlimit(RLIMIT_NOFILE, &r);
    ::getrlimit(RLIMIT_NOFILE, &r);
  }
  return r.rlim_cur > 512 ? std::min<size_t>(kMaxConnections, r.rlim_cur - 256) : 256;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
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
  Router router;
  std::unique_ptr<HttpDaemon> http;
  int port = 0;
  std::once_flag stopped;
  std::mutex run_mu;
  std::condition_variable run_cv;
  bool stopping = false;

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

  add_dashboard_routes(s.router, s.ctx);
  add_info_routes(s.router, s.ctx);
  add_lookup_routes(s.router, s.ctx);
  add_result_routes(s.router, s.ctx);
  add_report_routes(s.router, s.ctx);
  add_job_routes(s.router, s.ctx);

  HttpDaemonOptions http;
  http.host = s.address.host;
  http.port = s.address.port;
  http.threads = o.threads;
  http.max_connections = std::min(raise_open_file_limit(), o.threads + o.max_queue);
  http.max_body_bytes = o.max_body_bytes;
  http.idle_timeout_s = std::max(o.read_timeout_s, 1);
  if (o.tls_cert) {
    http.tls_cert_pem = read_text(*o.tls_cert);
    http.tls_key_pem = read_text(*o.tls_key);
  }
  // Before a body is read: a route that changes anything checks the token first (an
  // unauthenticated upload is refused unread).
  auto screen = [&s](const HttpRequest& req, HttpResponse& res) {
    if (!s.router.writes(req.method, req.path)) return false;
    guard([&](const HttpRequest& r, HttpResponse&) { require_write_access(s.ctx, r); }, req, res);
    return res.status >= 400;
  };
  s.http = std::make_unique<HttpDaemon>(
      http, [&s](HttpRequest& req, HttpResponse& res) { return s.router.dispatch(req, res); }, screen,
      [&s](const std::string& label, int status) { s.metrics.count_request(label, status); });
  s.port = s.http->port();
  if (s.jobs) s.jobs->events().set_listener([&s] { s.http->wake_streams(); });
  if (s.jobs) s.jobs->resume_interrupted();
}

Server::~Server() { stop(); }

int Server::port() const { return state_->port; }

std::string Server::url() const {
  ListenAddress a = state_->address;
  a.port = state_->port;
  return fmt::format("{}://{}", state_->options.tls_cert ? "https" : "http", a.text());
}

bool Server::run() {
  State& s = *state_;
  std::unique_lock lock(s.run_mu);
  s.run_cv.wait(lock, [&s] { return s.stopping; });
  return true;
}

void Server::stop() {
  State& s = *state_;
  std::call_once(s.stopped, [&s] {
    if (s.jobs) s.jobs->events().set_listener({});
    if (s.jobs) s.jobs->events().shutdown();  // event streams end
    if (s.http) s.http->stop();
    if (s.jobs) s.jobs->stop();
    {
      std::lock_guard lock(s.run_mu);
      s.stopping = true;
    }
    s.run_cv.notify_all();
  });
}

}  // namespace ktune::service
