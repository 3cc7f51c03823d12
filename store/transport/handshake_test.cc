#include "store/transport/handshake.h"

#include <string>

#include "gtest/gtest.h"

#include "store/transport/messenger_test_util.h"
#include "strata/store/transport/messenger.h"

namespace strata::store::transport {
namespace {

using testing::Bytes;

TEST(HandshakeTest, EachKindRoundTrips) {
  const std::string hello = HandshakeHeader(kHello, kFlagDirect, "host-id", "credential", "ucx");
  ParsedHandshake parsed;
  ASSERT_TRUE(ParseHandshake(Bytes(hello), &parsed));
  EXPECT_EQ(parsed.kind, kHello);
  EXPECT_TRUE(parsed.direct);
  EXPECT_EQ(parsed.host, "host-id");
  EXPECT_EQ(std::string(parsed.credential.begin(), parsed.credential.end()), "credential");
  EXPECT_EQ(parsed.worker_address, "ucx");
  const std::string refused = HandshakeHeader(kWelcome, kFlagRefused, "", "", "expired");
  ASSERT_TRUE(ParseHandshake(Bytes(refused), &parsed));
  EXPECT_TRUE(parsed.refused);
  EXPECT_EQ(parsed.worker_address, "expired");
  ASSERT_TRUE(ParseHandshake(Bytes(HandshakeHeader(kReady, 0, "", "", "")), &parsed));
  EXPECT_EQ(parsed.kind, kReady);
}

TEST(HandshakeTest, MalformedMessagesAreRefused) {
  const std::string hello = HandshakeHeader(kHello, 0, "host", "cred", "");
  for (size_t size = 0; size < hello.size() - 4; ++size) {  // cut inside host or credential
    ParsedHandshake parsed;
    EXPECT_FALSE(ParseHandshake(Bytes(hello.substr(0, size)), &parsed)) << size;
  }
  auto with = [&](size_t at, char value) {
    std::string bad = hello;
    bad[at] = value;
    ParsedHandshake parsed;
    return ParseHandshake(Bytes(bad), &parsed);
  };
  EXPECT_FALSE(with(0, 'X'));           // magic
  EXPECT_FALSE(with(1, 2));             // the version before credentials
  EXPECT_FALSE(with(2, 9));             // kind
  EXPECT_FALSE(with(3, kFlagRefused));  // refused is WELCOME's
  EXPECT_FALSE(with(3, 4));             // unknown flag
  ParsedHandshake parsed;
  EXPECT_FALSE(ParseHandshake(
      Bytes(HandshakeHeader(kWelcome, kFlagDirect | kFlagRefused, "", "", "")), &parsed));
  EXPECT_FALSE(ParseHandshake(Bytes(HandshakeHeader(kReady, 0, "", "cred", "")), &parsed));
  EXPECT_FALSE(ParseHandshake(
      Bytes(HandshakeHeader(kHello, 0, "", std::string(kMaxCredentialBytes + 1, 'c'), "")),
      &parsed));
  EXPECT_TRUE(ParseHandshake(
      Bytes(HandshakeHeader(kHello, 0, "", std::string(kMaxCredentialBytes, 'c'), "")), &parsed));
}

}  // namespace
}  // namespace strata::store::transport
