// Messenger authentication: a listener with MessengerOptions::authenticate admits only
// connections whose HELLO credential passes it, before acting on anything else they send.
// Two messengers over real sockets, per transport list.
#include <atomic>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "store/transport/messenger_test_util.h"
#include "strata/base/status_test_macros.h"
#include "strata/store/transport/messenger.h"

namespace strata::store::transport {
namespace {

using testing::Bytes;
using testing::Completion;
using testing::Text;
using testing::TransportName;

class AuthenticateTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    MessengerOptions server_options;
    server_options.name = "server";
    server_options.transports = GetParam();
    server_options.on_peer_connected = [this](PeerId peer, absl::Status) {
      connected_.fetch_add(1);
      last_peer_.store(static_cast<uint64_t>(peer));
    };
    server_options.authenticate =
        [this](absl::Span<const uint8_t> credential) -> absl::StatusOr<std::string> {
      checks_.fetch_add(1);
      if (Text(credential) == "good credential") return std::string("acme");
      return absl::UnauthenticatedError(
          absl::StrCat("a credential of ", credential.size(), " bytes is not known here"));
    };
    ASSERT_OK_AND_ASSIGN(server_, Messenger::Create(std::move(server_options)));
    ASSERT_OK(server_->RegisterHandler(
        1, [this](PeerId from, absl::Span<const uint8_t> header, IncomingData) {
          handled_.fetch_add(1);
          server_->Send(from, 2, header, {}, {}, [](absl::Status) {});
        }));
    MessengerOptions client_options;
    client_options.name = "client";
    client_options.transports = GetParam();
    ASSERT_OK_AND_ASSIGN(client_, Messenger::Create(std::move(client_options)));
    ASSERT_OK_AND_ASSIGN(const uint16_t port, server_->Listen("127.0.0.1:0"));
    address_ = absl::StrCat("127.0.0.1:", port);
  }

  std::atomic<int> connected_{0}, checks_{0}, handled_{0};
  std::atomic<uint64_t> last_peer_{0};
  std::unique_ptr<Messenger> server_;
  std::unique_ptr<Messenger> client_;
  std::string address_;
};

TEST_P(AuthenticateTest, AGoodCredentialConnectsAndNamesThePeer) {
  ASSERT_OK_AND_ASSIGN(const PeerId peer,
                       client_->Connect(address_, testing::kWaitLimit, "good credential"));
  Completion replied;
  ASSERT_OK(client_->RegisterHandler(
      2, [&](PeerId, absl::Span<const uint8_t>, IncomingData) { replied.Callback()({}); }));
  Completion sent;
  client_->Send(peer, 1, Bytes("ping"), {}, {}, sent.Callback());
  ASSERT_TRUE(sent.Wait());
  EXPECT_OK(sent.status());
  ASSERT_TRUE(replied.Wait());
  EXPECT_EQ(connected_.load(), 1);
  EXPECT_EQ(checks_.load(), 1);
  ASSERT_OK_AND_ASSIGN(const std::string identity,
                       server_->PeerIdentity(static_cast<PeerId>(last_peer_.load())));
  EXPECT_EQ(identity, "acme");
  EXPECT_EQ(server_->stats().peers_refused, 0u);
}

TEST_P(AuthenticateTest, NoOrABadCredentialIsRefusedWithTheReasonAndTheListenerKeepsServing) {
  for (const std::string& credential :
       {std::string(), std::string("forged"), std::string(kMaxCredentialBytes, '\xff')}) {
    const absl::StatusOr<PeerId> refused =
        client_->Connect(address_, testing::kWaitLimit, credential);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnauthenticated) << refused.status();
    EXPECT_THAT(std::string(refused.status().message()), ::testing::HasSubstr("is not known here"));
  }
  EXPECT_EQ(connected_.load(), 0);
  EXPECT_EQ(handled_.load(), 0);
  EXPECT_EQ(server_->stats().peers_refused, 3u);
  // Too long to send at all.
  EXPECT_EQ(
      client_->Connect(address_, testing::kWaitLimit, std::string(kMaxCredentialBytes + 1, 'x'))
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  // The listener still admits a good credential.
  EXPECT_OK(client_->Connect(address_, testing::kWaitLimit, "good credential"));
  // The server announces the peer on its READY, which may land after Connect returned.
  const absl::Time deadline = absl::Now() + testing::kWaitLimit;
  while (connected_.load() == 0 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_EQ(connected_.load(), 1);
}

INSTANTIATE_TEST_SUITE_P(Transports, AuthenticateTest, ::testing::Values("tcp", "shm,cma,tcp"),
                         TransportName);

}  // namespace
}  // namespace strata::store::transport
