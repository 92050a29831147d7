// `--listen` (service/listen_address.hpp): HOST:PORT parsing, and "loopback" decided from the
// addresses a host resolves to, not from its text.
#include "service/listen_address.hpp"

#include <gtest/gtest.h>

#include "ktune/error.hpp"

namespace ktune::service {
namespace {

TEST(ListenAddress, LoopbackIsDecidedFromTheResolvedAddresses) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1", "localhost"}) {
    EXPECT_TRUE((ListenAddress{host, 0}.loopback())) << host;
  }
  // Text that looks like loopback but is not, every address, and a name that does not resolve.
  for (const char* host :
       {"0.0.0.0", "::", "8.8.8.8", "::ffff:10.0.0.1", "127.example.invalid", "128.0.0.1"}) {
    EXPECT_FALSE((ListenAddress{host, 0}.loopback())) << host;
  }
}

TEST(ListenAddress, ParsesHostAndPortAndNamesWhatIsWrong) {
  const ListenAddress v4 = parse_listen_address("127.0.0.1:8787");
  EXPECT_EQ(v4.host, "127.0.0.1");
  EXPECT_EQ(v4.port, 8787);
  const ListenAddress v6 = parse_listen_address("[::1]:0");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.text(), "[::1]:0");
  for (const char* bad : {"127.0.0.1", ":80", "::1:80", "[::1]80", "host:99999", "host:8x"}) {
    EXPECT_THROW(parse_listen_address(bad), Error) << bad;
  }
}

}  // namespace
}  // namespace ktune::service
