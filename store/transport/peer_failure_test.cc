// Dead peers: outstanding operations fail (UNAVAILABLE, or CANCELLED for the side that shut
// down) within a bounded time instead of hanging. Real UCX, two messengers in one process;
// "dying" is destroying a messenger, which force-closes its endpoints (TCP resets reach the
// survivor at once).
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

#include "store/transport/messenger_test_util.h"
#include "strata/base/status_test_macros.h"
#include "strata/store/transport/messenger.h"

namespace strata::store::transport {
namespace {

using testing::Completion;
using testing::Pattern;
using testing::TransportName;

constexpr uint16_t kPut = 1;
// Peer failure must be noticed well within this (TCP reset, not a keepalive timeout).
constexpr absl::Duration kPromptly = absl::Seconds(5);

class PeerFailureTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    MessengerOptions server_options{.name = "server", .transports = GetParam()};
    server_options.on_peer_failed = [this](PeerId, absl::Status status) {
      absl::MutexLock lock(&mu_);
      server_saw_failure_ = status;
    };
    ASSERT_OK_AND_ASSIGN(server_, Messenger::Create(std::move(server_options)));
    MessengerOptions client_options{.name = "client", .transports = GetParam()};
    client_options.on_peer_failed = [this](PeerId peer, absl::Status status) {
      absl::MutexLock lock(&mu_);
      client_saw_failure_ = status;
    };
    ASSERT_OK_AND_ASSIGN(client_, Messenger::Create(std::move(client_options)));
    ASSERT_OK_AND_ASSIGN(const uint16_t port, server_->Listen("127.0.0.1:0"));
    ASSERT_OK_AND_ASSIGN(to_server_, client_->Connect(absl::StrCat("127.0.0.1:", port)));
  }

  // The server keeps every payload it receives, undecided.
  void KeepPayloads() {
    ASSERT_OK(server_->RegisterHandler(
        kPut, [this](PeerId, absl::Span<const uint8_t>, IncomingData data) {
          absl::MutexLock lock(&mu_);
          kept_.push_back(std::move(data));
        }));
  }
  bool WaitForKept(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return kept_.size() >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), testing::kWaitLimit);
  }

  // Declared before the messengers: their callbacks touch it until they are destroyed.
  absl::Mutex mu_;
  std::vector<IncomingData> kept_ ABSL_GUARDED_BY(mu_);
  absl::Status client_saw_failure_ ABSL_GUARDED_BY(mu_);
  absl::Status server_saw_failure_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Messenger> server_;
  std::unique_ptr<Messenger> client_;
  PeerId to_server_ = PeerId::kNone;
};

// The receiver dies while a 16 MiB rendezvous send waits for it: the send fails UNAVAILABLE
// and the client hears of the failed peer.
TEST_P(PeerFailureTest, ReceiverDeathFailsTheOutstandingSend) {
  KeepPayloads();
  const std::vector<uint8_t> payload = Pattern(size_t{16} << 20, 1);
  Completion sent;
  client_->Send(to_server_, kPut, {}, payload, {.protocol = DataProtocol::kRendezvous},
                sent.Callback());
  ASSERT_TRUE(WaitForKept(1));
  EXPECT_FALSE(sent.done()) << "the sender waits for the receiver to pull the payload";
  const absl::Time start = absl::Now();
  server_.reset();
  ASSERT_TRUE(sent.Wait(kPromptly));
  EXPECT_CODE(sent.status(), absl::StatusCode::kUnavailable);
  EXPECT_LT(absl::Now() - start, kPromptly);
  {
    absl::MutexLock lock(&mu_);
    auto failed = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !client_saw_failure_.ok(); };
    ASSERT_TRUE(mu_.AwaitWithTimeout(absl::Condition(&failed), kPromptly));
    EXPECT_CODE(client_saw_failure_, absl::StatusCode::kUnavailable);
  }
  // Later sends fail at once.
  Completion later;
  client_->Send(to_server_, kPut, {}, {}, {}, later.Callback());
  EXPECT_TRUE(later.Wait(kPromptly));
  EXPECT_CODE(later.status(), absl::StatusCode::kUnavailable);
}

// The sender dies with its payload announced but not yet accepted: its own sends complete
// (CANCELLED) before its destructor returns, and once the receiver saw the peer fail, a late
// Accept of a kept payload fails UNAVAILABLE. (Over the stream the bytes may have arrived
// whole, into the connection's parking buffer, before the sender died; they are dropped with
// the peer all the same, so that both sides agree the transfer did not happen.)
TEST_P(PeerFailureTest, SenderDeathFailsAKeptPayload) {
  KeepPayloads();
  const std::vector<uint8_t> payload = Pattern(size_t{16} << 20, 2);
  std::vector<Completion> sends(4);
  for (Completion& sent : sends) {
    client_->Send(to_server_, kPut, {}, payload, {.protocol = DataProtocol::kRendezvous},
                  sent.Callback());
  }
  ASSERT_TRUE(WaitForKept(sends.size()));
  client_.reset();
  for (Completion& sent : sends) {
    ASSERT_TRUE(sent.done()) << "completions run before the messenger's destructor returns";
    EXPECT_FALSE(sent.status().ok()) << sent.status();
  }
  {
    absl::MutexLock lock(&mu_);
    auto failed = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !server_saw_failure_.ok(); };
    ASSERT_TRUE(mu_.AwaitWithTimeout(absl::Condition(&failed), kPromptly));
  }
  std::vector<uint8_t> dest(payload.size());
  std::vector<Completion> received(sends.size());
  {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < kept_.size(); ++i) {
      kept_[i].Accept(absl::MakeSpan(dest), received[i].Callback());
    }
  }
  for (Completion& r : received) {
    ASSERT_TRUE(r.Wait(kPromptly));
    EXPECT_CODE(r.status(), absl::StatusCode::kUnavailable);
  }
}

// The sender dies while the receiver pulls a large payload: the receive completes — OK if it
// won the race, else UNAVAILABLE — and never hangs.
TEST_P(PeerFailureTest, SenderDeathMidTransferNeverHangs) {
  const size_t size = size_t{64} << 20;
  const std::vector<uint8_t> payload = Pattern(size, 3);
  std::vector<uint8_t> dest(size);
  Completion received;
  Completion handler_ran;
  ASSERT_OK(
      server_->RegisterHandler(kPut, [&](PeerId, absl::Span<const uint8_t>, IncomingData data) {
        data.Accept(absl::MakeSpan(dest), received.Callback());
        handler_ran.Callback()(absl::OkStatus());
      }));
  Completion sent;
  client_->Send(to_server_, kPut, {}, payload, {.protocol = DataProtocol::kRendezvous},
                sent.Callback());
  ASSERT_TRUE(handler_ran.Wait());
  client_.reset();
  ASSERT_TRUE(sent.done());
  ASSERT_TRUE(received.Wait(kPromptly));
  const absl::Status status = received.status();
  EXPECT_TRUE(status.ok() || status.code() == absl::StatusCode::kUnavailable) << status;
  if (status.ok()) {
    EXPECT_EQ(dest, payload);
  }
}

// A graceful Disconnect: the client's later sends fail UNAVAILABLE and the server hears of
// the peer going away.
TEST_P(PeerFailureTest, DisconnectIsSeenByBothSides) {
  absl::Notification server_saw_peer;
  absl::Notification server_saw_failure;
  server_.reset();
  MessengerOptions server_options{.name = "server", .transports = GetParam()};
  server_options.on_peer_connected = [&](PeerId, absl::Status) { server_saw_peer.Notify(); };
  server_options.on_peer_failed = [&](PeerId, absl::Status status) {
    EXPECT_CODE(status, absl::StatusCode::kUnavailable);
    server_saw_failure.Notify();
  };
  ASSERT_OK_AND_ASSIGN(server_, Messenger::Create(std::move(server_options)));
  ASSERT_OK_AND_ASSIGN(const uint16_t port, server_->Listen("127.0.0.1:0"));
  ASSERT_OK_AND_ASSIGN(const PeerId peer, client_->Connect(absl::StrCat("127.0.0.1:", port)));
  // Only a peer the server announced is reported failed (the announcement may trail the
  // client's Connect a little).
  ASSERT_TRUE(server_saw_peer.WaitForNotificationWithTimeout(kPromptly));
  client_->Disconnect(peer);
  EXPECT_TRUE(server_saw_failure.WaitForNotificationWithTimeout(kPromptly));
  Completion after;
  client_->Send(peer, kPut, {}, {}, {}, after.Callback());
  ASSERT_TRUE(after.Wait());
  EXPECT_CODE(after.status(), absl::StatusCode::kUnavailable);
  server_.reset();  // its callback refers to this frame
}

// A payload kept past its messenger's shutdown reports CANCELLED.
TEST_P(PeerFailureTest, KeptPayloadAcceptedAfterShutdownIsCancelled) {
  KeepPayloads();
  const std::vector<uint8_t> payload = Pattern(size_t{1} << 20, 4);
  Completion sent;
  client_->Send(to_server_, kPut, {}, payload, {.protocol = DataProtocol::kRendezvous},
                sent.Callback());
  ASSERT_TRUE(WaitForKept(1));
  std::vector<IncomingData> kept;
  {
    absl::MutexLock lock(&mu_);
    kept.swap(kept_);
  }
  server_.reset();
  std::vector<uint8_t> dest(payload.size());
  Completion received;
  kept[0].Accept(absl::MakeSpan(dest), received.Callback());
  ASSERT_TRUE(received.done()) << "runs at once on the caller's thread";
  EXPECT_CODE(received.status(), absl::StatusCode::kCancelled);
  ASSERT_TRUE(sent.Wait(kPromptly));
  EXPECT_FALSE(sent.status().ok());
}

INSTANTIATE_TEST_SUITE_P(Transports, PeerFailureTest, ::testing::Values("tcp", "shm,cma,tcp"),
                         TransportName);

}  // namespace
}  // namespace strata::store::transport
