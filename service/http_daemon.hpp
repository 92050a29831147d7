#pragma once
/// The service's HTTP listener, over libmicrohttpd: a pool of event-loop threads (epoll), each
/// holding any number of connections, so slow clients and event streams hold no thread; bounded
/// memory a connection (headers included), an idle timeout, keep-alive and pipelining, TLS with a
/// PEM certificate and key. Request bodies are read only when announced by a Content-Length within
/// the limit (chunked or encoded bodies are refused before any byte of them is read), and a refusal
/// sent before the body closes the connection, so an unread body is never taken for a request.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "service/http_message.hpp"

namespace ktune::service {

struct HttpDaemonOptions {
  std::string host = "127.0.0.1";
  int port = 0;                          ///< 0: the kernel picks one (port() says which)
  size_t threads = 4;                    ///< event-loop threads
  size_t max_connections = 4096;         ///< open at once; more are refused at accept
  size_t max_body_bytes = 1 << 20;       ///< a larger Content-Length is answered 413 unread
  size_t connection_memory = 16 * 1024;  ///< a connection's buffers: its request line and headers must fit
  int idle_timeout_s = 10;               ///< a connection silent this long is closed
  std::optional<std::string> tls_cert_pem, tls_key_pem;
};

class HttpDaemon {
 public:
  /// Answers a request whose body has been read; returns its route label (for the metrics).
  using Handler = std::function<std::string(HttpRequest&, HttpResponse&)>;
  /// Sees a request before its body is read (body empty): fills `res` and returns true to refuse it.
  using Screen = std::function<bool(const HttpRequest&, HttpResponse&)>;
  /// Called once a request is answered: its route label and status.
  using Completed = std::function<void(const std::string& label, int status)>;

  /// Binds and starts the threads. Throws ktune::Error(kRuntime) when the address cannot be bound,
  /// kBadInput when the TLS certificate and key are not usable.
  HttpDaemon(const HttpDaemonOptions& options, Handler handler, Screen screen, Completed completed);
  ~HttpDaemon();
  HttpDaemon(const HttpDaemon&) = delete;
  HttpDaemon& operator=(const HttpDaemon&) = delete;

  int port() const;
  /// Wakes every parked event stream to poll again (something changed). Cheap; thread-safe.
  void wake_streams();
  /// Ends event streams, closes every connection and joins the threads (idempotent).
  void stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ktune::service
