#include "service/http_daemon.hpp"

#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "ktune/error.hpp"
#include "service/api_error.hpp"

namespace ktune::service {
namespace {

/// How often parked event streams are polled even when nothing woke them (their heartbeat and the
/// end of a job that published no event are seen within this).
constexpr auto kStreamPoll = std::chrono::milliseconds(250);

/// One request on a connection, from its headers to the end of its answer.
struct Exchange {
  HttpRequest req;
  std::string label = "unmatched";
  int status = 0;
  bool answered = false;  ///< a response is queued (a refusal before the body, or the answer)
};

/// The body of a streamed answer, owned by its MHD response.
struct Stream {
  HttpDaemon::Impl* daemon = nullptr;
  MHD_Connection* connection = nullptr;
  std::function<std::string(bool&)> next;
  std::string pending;
  size_t offset = 0;
  bool ended = false;
};

/// The announced body length: nullopt when there is none; `why` says what is wrong with a header
/// that is not one number (or two that differ).
std::optional<uint64_t> content_length(const HttpRequest& req, std::string& why) {
  std::optional<std::string> text;
  for (const auto& [k, v] : req.headers) {
    if (strcasecmp(k.c_str(), "Content-Length") != 0) continue;
    if (text && v != *text) {
      why = "the request has two different Content-Length headers";
      return 0;
    }
    text = v;
  }
  if (!text) return std::nullopt;
  if (text->empty() || text->size() > 19 || text->find_first_not_of("0123456789") != std::string::npos) {
    why = "the Content-Length header is not a number";
    return 0;
  }
  return std::stoull(*text);
}

/// A listening socket on `address` (SO_REUSEADDR, a backlog of 1,024, non-blocking).
int listen_on(const sockaddr_storage& address, const std::string& host, int port) {
  const int fd = ::socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    throw Error(ErrorKind::kRuntime, fmt::format("cannot listen on {}:{}: {}", host, port, std::strerror(errno)));
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  const socklen_t len = address.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), len) != 0 || ::listen(fd, 1024) != 0) {
    ::close(fd);
    throw Error(ErrorKind::kRuntime,
                fmt::format("cannot listen on {}:{} (in use, or not an address of this machine)", host, port));
  }
  return fd;
}

}  // namespace

struct HttpDaemon::Impl {
  HttpDaemonOptions options;
  Handler handler;
  Screen screen;
  Completed completed;
  MHD_Daemon* daemon = nullptr;
  int port = 0;
  int listen_fd = -1;
  int accept_wake_fd = -1;  ///< an eventfd: written once to end the acceptor
  std::thread acceptor;

  std::mutex parked_mu;
  std::set<Stream*> parked;  ///< suspended stream connections, resumed by the pump
  std::condition_variable pump_cv;
  bool pump_wake = false;
  std::atomic<bool> stopping{false};
  std::thread pump;
  std::once_flag stopped;

  void answer(MHD_Connection* c, Exchange& x, HttpResponse& res);
  void run_pump();
  /// Accepts connections and hands each to libmicrohttpd, which gives it to the pool thread its
  /// descriptor names (descriptor modulo pool size): consecutive connections land on different
  /// threads, where libmicrohttpd's own accept lets one thread take a burst of them.
  void run_acceptor();
  /// Resumes every parked stream (parked_mu held).
  void resume_parked();
};

namespace {

HttpDaemon::Impl& impl_of(void* cls) { return *static_cast<HttpDaemon::Impl*>(cls); }

size_t keep_escapes(void*, MHD_Connection*, char* s) { return std::strlen(s); }

MHD_Result collect_header(void* cls, MHD_ValueKind, const char* key, const char* value) {
  static_cast<HttpRequest*>(cls)->headers.emplace_back(key, value != nullptr ? value : "");
  return MHD_YES;
}

MHD_Result collect_argument(void* cls, MHD_ValueKind, const char* key, const char* value) {
  static_cast<HttpRequest*>(cls)->query.emplace_back(percent_decode(key, true),
                                                     value != nullptr ? percent_decode(value, true) : "");
  return MHD_YES;
}

ssize_t read_stream(void* cls, uint64_t, char* buf, size_t max) {
  Stream& s = *static_cast<Stream*>(cls);
  HttpDaemon::Impl& d = *s.daemon;
  while (s.offset == s.pending.size()) {
    if (s.ended || d.stopping.load()) return MHD_CONTENT_READER_END_OF_STREAM;
    s.pending.clear();
    s.offset = 0;
    bool ended = false;
    try {
      s.pending = s.next(ended);
    } catch (const std::exception&) {
      return MHD_CONTENT_READER_END_OF_STREAM;
    }
    s.ended = ended;
    if (s.pending.empty()) {
      if (s.ended) return MHD_CONTENT_READER_END_OF_STREAM;
      // Nothing yet: park the connection (no thread waits for it) until the pump resumes it.
      std::lock_guard lock(d.parked_mu);
      if (d.stopping.load()) return MHD_CONTENT_READER_END_OF_STREAM;
      d.parked.insert(&s);
      MHD_suspend_connection(s.connection);
      return 0;
    }
  }
  const size_t n = std::min(max, s.pending.size() - s.offset);
  std::memcpy(buf, s.pending.data() + s.offset, n);
  s.offset += n;
  return static_cast<ssize_t>(n);
}

void free_stream(void* cls) {
  Stream* s = static_cast<Stream*>(cls);
  {
    std::lock_guard lock(s->daemon->parked_mu);
    s->daemon->parked.erase(s);
  }
  delete s;
}

MHD_Result on_request(void* cls, MHD_Connection* c, const char* url, const char* method, const char*,
                      const char* upload, size_t* upload_size, void** con_cls) {
  HttpDaemon::Impl& d = impl_of(cls);
  auto* x = static_cast<Exchange*>(*con_cls);
  if (x == nullptr) {  // the headers are in; no byte of the body has been read
    x = new Exchange;
    *con_cls = x;
    x->req.method = method;
    x->req.path = percent_decode(url, false);
    MHD_get_connection_values(c, MHD_HEADER_KIND, collect_header, &x->req);
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_argument, &x->req);
    HttpResponse res;
    std::string why;
    const std::optional<uint64_t> length = content_length(x->req, why);
    const bool has_body = length.has_value() || x->req.has_header("Transfer-Encoding");
    bool refuse = true;
    const bool method_ok =
        !x->req.method.empty() && std::all_of(x->req.method.begin(), x->req.method.end(),
                                              [](char ch) { return ch >= 'A' && ch <= 'Z'; });
    if (!method_ok) {
      send_error(res, 400, "bad_request",
                 fmt::format("malformed request line: '{}' is not an HTTP method (they are upper case)",
                             x->req.method));
    } else if (!why.empty()) {
      send_error(res, 400, "bad_request", why);
    } else if (x->req.has_header("Transfer-Encoding")) {
      send_error(res, 411, "length_required",
                 "request bodies need a Content-Length (chunked bodies are refused before they are read)");
    } else if (const std::string enc = x->req.get_header_value("Content-Encoding");
               !enc.empty() && enc != "identity") {
      send_error(res, 415, "unsupported_media_type",
                 fmt::format("Content-Encoding '{}': request bodies are read as sent, never decoded", enc));
    } else if (length && *length > d.options.max_body_bytes) {
      send_error(res, 413, "too_large", "the request body is larger than this server's --max-body-bytes");
    } else if (!length && x->req.method == "POST") {
      send_error(res, 411, "length_required", "a POST needs a Content-Length header");
    } else {
      refuse = d.screen && d.screen(x->req, res);
    }
    if (refuse) {
      if (has_body) res.set_header("Connection", "close");  // its body stays unread: end the connection
      d.answer(c, *x, res);
    }
    return MHD_YES;
  }
  if (*upload_size > 0) {  // at most the Content-Length, which is within the limit
    if (!x->answered) x->req.body.append(upload, *upload_size);
    *upload_size = 0;
    return MHD_YES;
  }
  if (x->answered) return MHD_YES;
  HttpResponse res;
  try {
    x->label = d.handler(x->req, res);
  } catch (const std::exception&) {
    res = HttpResponse{};
    send_error(res, 500, "internal", "the server failed answering this request");
  }
  d.answer(c, *x, res);
  return MHD_YES;
}

void on_completed(void* cls, MHD_Connection*, void** con_cls, MHD_RequestTerminationCode) {
  auto* x = static_cast<Exchange*>(*con_cls);
  if (x == nullptr) return;
  HttpDaemon::Impl& d = impl_of(cls);
  if (d.completed && x->answered) d.completed(x->label, x->status);
  delete x;
  *con_cls = nullptr;
}

}  // namespace

void HttpDaemon::Impl::answer(MHD_Connection* c, Exchange& x, HttpResponse& res) {
  MHD_Response* r = nullptr;
  if (res.stream) {
    auto* s = new Stream{this, c, std::move(res.stream), {}, 0, false};
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, read_stream, s, free_stream);
    if (r == nullptr) delete s;
  } else {
    r = MHD_create_response_from_buffer(res.body.size(), res.body.data(), MHD_RESPMEM_MUST_COPY);
  }
  if (r == nullptr) return;  // out of memory: MHD closes the connection
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, res.content_type.c_str());
  for (const auto& [k, v] : res.headers) MHD_add_response_header(r, k.c_str(), v.c_str());
  x.status = res.status;
  x.answered = MHD_queue_response(c, static_cast<unsigned>(res.status), r) == MHD_YES;
  MHD_destroy_response(r);
}

void HttpDaemon::Impl::resume_parked() {
  for (Stream* s : parked) MHD_resume_connection(s->connection);
  parked.clear();
}

void HttpDaemon::Impl::run_pump() {
  std::unique_lock lock(parked_mu);
  while (!stopping.load()) {
    pump_cv.wait_for(lock, kStreamPoll, [&] { return pump_wake || stopping.load(); });
    pump_wake = false;
    resume_parked();
  }
}

void HttpDaemon::Impl::run_acceptor() {
  pollfd fds[2] = {{listen_fd, POLLIN, 0}, {accept_wake_fd, POLLIN, 0}};
  while (true) {
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) break;
    if (fds[1].revents != 0) break;
    if (fds[0].revents == 0) continue;
    while (true) {  // every connection waiting, then back to poll
      sockaddr_storage peer{};
      socklen_t peer_len = sizeof peer;
      const int fd =
          ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &peer_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));  // out of descriptors: wait for closes
        break;
      }
      // Refused (the connection limit, or no memory): libmicrohttpd closes the socket.
      MHD_add_connection(daemon, fd, reinterpret_cast<sockaddr*>(&peer), peer_len);
    }
  }
}

HttpDaemon::HttpDaemon(const HttpDaemonOptions& o, Handler handler, Screen screen, Completed completed)
    : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  d.options = o;
  d.handler = std::move(handler);
  d.screen = std::move(screen);
  d.completed = std::move(completed);

  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(o.port);
  if (::getaddrinfo(o.host.c_str(), port.c_str(), &hints, &found) != 0 || found == nullptr)
    throw Error(ErrorKind::kRuntime,
                fmt::format("cannot listen on {}:{}: the host does not resolve", o.host, o.port));
  sockaddr_storage address{};
  std::memcpy(&address, found->ai_addr, found->ai_addrlen);
  const bool ipv6 = found->ai_family == AF_INET6;
  ::freeaddrinfo(found);

  d.listen_fd = listen_on(address, o.host, o.port);
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  ::getsockname(d.listen_fd, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  d.port = ntohs(ipv6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                      : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);

  unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC |
                   MHD_ALLOW_SUSPEND_RESUME;
  if (ipv6) flags |= MHD_USE_IPv6;
  if (o.tls_cert_pem) flags |= MHD_USE_TLS;
  std::vector<MHD_OptionItem> options = {
      {MHD_OPTION_THREAD_POOL_SIZE, static_cast<intptr_t>(std::max<size_t>(1, o.threads)), nullptr},
      {MHD_OPTION_CONNECTION_LIMIT, static_cast<intptr_t>(o.max_connections), nullptr},
      {MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<intptr_t>(o.connection_memory), nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT, o.idle_timeout_s, nullptr},
      {MHD_OPTION_STRICT_FOR_CLIENT, 1, nullptr},
      {MHD_OPTION_UNESCAPE_CALLBACK, reinterpret_cast<intptr_t>(&keep_escapes), nullptr},
      {MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&on_completed), &d},
  };
  if (o.tls_cert_pem) {
    options.push_back({MHD_OPTION_HTTPS_MEM_KEY, 0, const_cast<char*>(d.options.tls_key_pem->c_str())});
    options.push_back({MHD_OPTION_HTTPS_MEM_CERT, 0, const_cast<char*>(d.options.tls_cert_pem->c_str())});
  }
  options.push_back({MHD_OPTION_END, 0, nullptr});
  d.daemon = MHD_start_daemon(flags, 0, nullptr, nullptr, &on_request, &d, MHD_OPTION_ARRAY, options.data(),
                              MHD_OPTION_END);
  if (d.daemon == nullptr) {
    ::close(d.listen_fd);
    d.listen_fd = -1;
    if (o.tls_cert_pem)
      throw Error(ErrorKind::kBadInput, "the TLS certificate and key could not be used");
    throw Error(ErrorKind::kRuntime, "the HTTP event-loop threads could not be started");
  }
  d.accept_wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  d.acceptor = std::thread([&d] { d.run_acceptor(); });
  d.pump = std::thread([&d] { d.run_pump(); });
}

HttpDaemon::~HttpDaemon() { stop(); }

int HttpDaemon::port() const { return impl_->port; }

void HttpDaemon::wake_streams() {
  Impl& d = *impl_;
  {
    std::lock_guard lock(d.parked_mu);
    d.pump_wake = true;
  }
  d.pump_cv.notify_one();
}

void HttpDaemon::stop() {
  Impl& d = *impl_;
  std::call_once(d.stopped, [&d] {
    {
      std::lock_guard lock(d.parked_mu);
      d.stopping.store(true);
    }
    d.pump_cv.notify_one();
    if (d.pump.joinable()) d.pump.join();
    // Parked streams resume, see `stopping` and end; then every connection is closed.
    {
      std::lock_guard lock(d.parked_mu);
      d.resume_parked();
    }
    // No new connection from here: the acceptor ends, then the listening socket is closed.
    if (d.acceptor.joinable()) {
      const uint64_t one = 1;
      [[maybe_unused]] const ssize_t n = ::write(d.accept_wake_fd, &one, sizeof one);
      d.acceptor.join();
    }
    if (d.accept_wake_fd >= 0) ::close(d.accept_wake_fd);
    if (d.listen_fd >= 0) ::close(d.listen_fd);
    d.accept_wake_fd = d.listen_fd = -1;
    if (d.daemon != nullptr) {
      {
        std::lock_guard lock(d.parked_mu);
        d.resume_parked();
      }
      MHD_stop_daemon(d.daemon);
      d.daemon = nullptr;
    }
  });
}

}  // namespace ktune::service
