#include "service/listen_address.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <charconv>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::service {

namespace {

bool is_loopback(const sockaddr* addr) {
  if (addr->sa_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(addr);
    return (ntohl(v4->sin_addr.s_addr) >> 24) == 127;  // 127.0.0.0/8
  }
  if (addr->sa_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&a)) return true;
    return IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127;  // ::ffff:127.x.y.z
  }
  return false;
}

}  // namespace

bool ListenAddress::loopback() const {
  // Decided from the addresses the host resolves to, not from its text: "127.example.com" may be
  // anywhere, and a name is loopback only when every address it has is.
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) return false;
  bool all = true;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) all = all && is_loopback(a->ai_addr);
  freeaddrinfo(found);
  return all;
}

std::string ListenAddress::text() const {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port)
                                             : fmt::format("{}:{}", host, port);
}

ListenAddress parse_listen_address(const std::string& text) {
  const auto bad = [&](const char* why) {
    return Error(
        ErrorKind::kBadInput,
        fmt::format("--listen '{}': {} (expected HOST:PORT, e.g. 127.0.0.1:8787 or [::1]:8787)", text, why));
  };
  ListenAddress a;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      throw bad("an IPv6 address goes in brackets followed by :PORT");
    a.host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos) throw bad("no port");
    a.host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (a.host.find(':') != std::string::npos) throw bad("an IPv6 address goes in brackets");
  }
  if (a.host.empty()) throw bad("no host");
  int value = -1;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value < 0 || value > 65535)
    throw bad("the port is not a number from 0 to 65535");
  a.port = value;
  return a;
}

}  // namespace ktune::service
