#pragma once
/// `--listen HOST:PORT`: where the service listens. Loopback (127.0.0.0/8, ::1, localhost) is the
/// default; any other address needs a token (docs/service.md "Security").

#include <string>

namespace ktune::service {

struct ListenAddress {
  std::string host;  ///< "127.0.0.1", "::1", "0.0.0.0", ...
  int port = 8787;   ///< 0: an ephemeral port the kernel picks (tests)

  /// Whether only this machine can connect: every address the host resolves to is a loopback one
  /// (127.0.0.0/8, ::1, ::ffff:127.x.y.z). A host that does not resolve is not.
  bool loopback() const;
  /// "127.0.0.1:8787", "[::1]:8787".
  std::string text() const;
};

/// Parses "HOST:PORT" or "[IPv6]:PORT". Throws ktune::Error(kBadInput) naming the value.
ListenAddress parse_listen_address(const std::string& text);

}  // namespace ktune::service
