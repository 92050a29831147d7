#include "service/listen_address.hpp"

#include <charconv>

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::service {

bool ListenAddress::loopback() const {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
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
