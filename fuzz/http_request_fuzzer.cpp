// Fuzz target: raw bytes sent to a running `ktune serve` (service::Server on loopback, an empty
// database, the real routes) as one connection's input, then half-closed. The contract: the server
// answers with HTTP responses or closes, never crashes or hangs (each exchange is bounded), and
// keeps answering: a health request on a fresh connection after every input gets a 200.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "fuzz_contract.hpp"
#include "service/server.hpp"

namespace {

std::string g_dir;  // the server's folder, removed when the process exits

int server_port() {
  static const int port = [] {
    std::string dir = (std::filesystem::temp_directory_path() / "ktune-http-fuzz-XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr) std::abort();
    g_dir = dir;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(g_dir, ec);
    });
    ktune::service::ServeOptions o;
    o.listen = "127.0.0.1:0";
    o.db = std::filesystem::path(dir) / "fuzz.db";
    o.devices = "none";
    o.threads = 2;
    o.max_body_bytes = 64 * 1024;
    auto* server = new ktune::service::Server(o);  // lives as long as the process
    std::thread([server] { server->run(); }).detach();
    return server->port();
  }();
  return port;
}

/// Sends `bytes` on a new connection, half-closes it and returns what came back (2 s at most).
std::string exchange(std::string_view bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) std::abort();
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(server_port()));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    ktune::fuzz::contract_broken("http_request", "connect", "");
  timeval t{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &t, sizeof t);
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server answered and closed before taking everything
    sent += static_cast<size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string got;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return got;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string got = exchange(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!got.empty() && got.rfind("HTTP/1.", 0) != 0)
    ktune::fuzz::contract_broken("http_request", "an answer that is not HTTP", got.substr(0, 80));
  const std::string health = exchange("GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  if (health.rfind("HTTP/1.1 200", 0) != 0)
    ktune::fuzz::contract_broken("http_request", "health stopped answering", health.substr(0, 80));
  return 0;
}
