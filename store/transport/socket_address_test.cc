#include "store/transport/socket_address.h"

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::store::transport {
namespace {

TEST(SocketAddressTest, ParsesIpv4AndIpv6) {
  ASSERT_OK_AND_ASSIGN(SocketAddress v4, SocketAddress::Parse("127.0.0.1:7401"));
  EXPECT_EQ(v4.port(), 7401);
  EXPECT_EQ(v4.ToString(), "127.0.0.1:7401");
  ASSERT_OK_AND_ASSIGN(SocketAddress v6, SocketAddress::Parse("[::1]:0"));
  EXPECT_EQ(v6.port(), 0);
  EXPECT_EQ(v6.ToString(), "[::1]:0");
}

TEST(SocketAddressTest, RejectsMalformedInput) {
  for (const char* bad : {"", "127.0.0.1", ":7401", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
                          "127.0.0.1:12x", "[::1]7401", "[::1"}) {
    EXPECT_CODE(SocketAddress::Parse(bad), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(SocketAddressTest, UnresolvableNameIsUnavailable) {
  EXPECT_CODE(SocketAddress::Parse("no-such-host.invalid:1"), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace strata::store::transport
