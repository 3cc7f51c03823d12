// A Messenger's listener against hostile and stalled peers: byte streams that crashed UCX's
// TCP code, silent connections, too many connections and a receiver that stops reading. Each
// over "tcp" and "shm,cma,tcp" (the same-host path); real sockets on loopback.
#include <cerrno>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

#include "store/transport/messenger_test_util.h"
#include "strata/base/status_macros.h"
#include "strata/base/status_test_macros.h"
#include "strata/store/transport/messenger.h"
#include "strata/testing/net.h"

namespace strata::store::transport {
namespace {

using testing::Bytes;
using testing::Completion;
using testing::Pattern;
using testing::TransportName;

constexpr uint16_t kPing = 1;
constexpr uint16_t kPong = 2;
constexpr uint16_t kBulk = 3;
constexpr size_t kMaxPeers = 8;
constexpr absl::Duration kHandshakeTimeout = absl::Milliseconds(400);
constexpr absl::Duration kTransferTimeout = absl::Seconds(1);

// A raw TCP connection to 127.0.0.1:port (nothing sent).
int RawConnect(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// How long until the peer closes `fd` (recv returns 0 or an error), at most `limit`;
// InfiniteDuration() if it stayed open.
absl::Duration TimeUntilClosed(int fd, absl::Duration limit) {
  const absl::Time start = absl::Now();
  timeval tv = absl::ToTimeval(limit);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  char byte;
  const ssize_t n = recv(fd, &byte, 1, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return absl::InfiniteDuration();
  return absl::Now() - start;
}

class HostilePeerTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    MessengerOptions server_options;
    server_options.name = "server";
    server_options.transports = GetParam();
    server_options.handshake_timeout = kHandshakeTimeout;
    server_options.transfer_timeout = kTransferTimeout;
    server_options.max_peers = kMaxPeers;
    server_options.on_peer_connected = [this](PeerId peer, absl::Status) {
      absl::MutexLock lock(&mu_);
      accepted_.push_back(peer);
    };
    ASSERT_OK_AND_ASSIGN(server_, Messenger::Create(std::move(server_options)));
    ASSERT_OK(server_->RegisterHandler(
        kPing, [this](PeerId from, absl::Span<const uint8_t> header, IncomingData) {
          server_->Send(from, kPong, header, {}, {}, [](absl::Status) {});
        }));
    ASSERT_OK_AND_ASSIGN(port_, server_->Listen("127.0.0.1:0"));
    address_ = absl::StrCat("127.0.0.1:", port_);
  }

  std::unique_ptr<Messenger> NewClient(size_t max_parked_bytes = size_t{64} << 20) {
    MessengerOptions options;
    options.name = "client";
    options.transports = GetParam();
    options.max_parked_bytes = max_parked_bytes;
    auto client = Messenger::Create(std::move(options));
    EXPECT_OK(client.status());
    return client.ok() ? *std::move(client) : nullptr;
  }

  // A ping from a fresh client answered by the server.
  absl::Status RoundTrip() {
    std::unique_ptr<Messenger> client = NewClient();
    if (client == nullptr) return absl::InternalError("no client");
    Completion pong;
    auto done = std::make_shared<CompletionCallback>(pong.Callback());
    STRATA_RETURN_IF_ERROR(
        client->RegisterHandler(kPong, [done](PeerId, absl::Span<const uint8_t>, IncomingData) {
          if (*done) std::move (*done)(absl::OkStatus());
          *done = nullptr;
        }));
    STRATA_ASSIGN_OR_RETURN(const PeerId peer, client->Connect(address_, absl::Seconds(5)));
    client->Send(peer, kPing, Bytes("ping"), {}, {}, [](absl::Status) {});
    if (!pong.Wait(absl::Seconds(5))) return absl::DeadlineExceededError("no pong");
    return pong.status();
  }

  PeerId LastAccepted() {
    absl::MutexLock lock(&mu_);
    auto any = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !accepted_.empty(); };
    EXPECT_TRUE(mu_.AwaitWithTimeout(absl::Condition(&any), testing::kWaitLimit));
    return accepted_.empty() ? PeerId::kNone : accepted_.back();
  }

  absl::Mutex mu_;
  std::vector<PeerId> accepted_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Messenger> server_;
  uint16_t port_ = 0;
  std::string address_;
};

// Each stream in one write, then a real client on a new connection: answered every time.
TEST_P(HostilePeerTest, HostileStreamsNeverStopTheListener) {
  for (const strata::testing::HostileStream& stream : strata::testing::HostileStreams()) {
    SCOPED_TRACE(stream.name);
    ASSERT_OK(strata::testing::SendRawStream(address_, stream.bytes));
    ASSERT_OK(RoundTrip());
  }
  // A real client's first bytes, replayed four times in one write by a raw socket.
  // (Captured from a listener of our own.)
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  socklen_t length = sizeof(addr);
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &length);
  std::unique_ptr<Messenger> real = NewClient();
  ASSERT_NE(real, nullptr);
  std::thread connecting([&] {
    real->Connect(absl::StrCat("127.0.0.1:", ntohs(addr.sin_port)), absl::Seconds(1))
        .status()
        .IgnoreError();
  });
  const int accepted = accept(listener, nullptr, nullptr);
  ASSERT_GE(accepted, 0);
  timeval tv = absl::ToTimeval(absl::Milliseconds(500));
  setsockopt(accepted, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string first(4096, '\0');
  const ssize_t got = recv(accepted, first.data(), first.size(), 0);
  ASSERT_GT(got, 0);
  first.resize(got);
  connecting.join();
  close(accepted);
  close(listener);
  ASSERT_OK(strata::testing::SendRawStream(address_, first + first + first + first));
  ASSERT_OK(RoundTrip());
}

// The messenger opens no port but the ones it was asked to listen on: UCX's TCP transport,
// which aborts on malformed input, never listens here.
TEST_P(HostilePeerTest, ListensOnlyWhereAsked) {
  std::unique_ptr<Messenger> client = NewClient();
  ASSERT_NE(client, nullptr);
  ASSERT_OK(client->Connect(address_).status());
  ASSERT_OK_AND_ASSIGN(const std::vector<uint16_t> ports,
                       strata::testing::ListeningTcpPorts(getpid()));
  EXPECT_EQ(ports, std::vector<uint16_t>{port_});
}

// A connection that never completes the handshake is closed after handshake_timeout.
TEST_P(HostilePeerTest, SilentConnectionsAreClosedAfterTheHandshakeTimeout) {
  const absl::Time start = absl::Now();
  const int silent = RawConnect(port_);
  ASSERT_GE(silent, 0);
  const int partial = RawConnect(port_);
  ASSERT_GE(partial, 0);
  ASSERT_EQ(send(partial, "\x53\x01\xff\xff", 4, 0), 4);  // half a frame header, then nothing
  for (int fd : {silent, partial}) {
    EXPECT_LT(TimeUntilClosed(fd, absl::Seconds(10)), absl::Seconds(5));
    EXPECT_GE(absl::Now() - start, kHandshakeTimeout);
    close(fd);
  }
  ASSERT_OK(RoundTrip());
}

// At most max_peers connections: one more is closed as soon as it is accepted; when they go,
// clients are served again.
TEST_P(HostilePeerTest, ConnectionsBeyondMaxPeersAreClosedAtOnce) {
  std::vector<int> held;
  for (size_t i = 0; i < kMaxPeers; ++i) {
    held.push_back(RawConnect(port_));
    ASSERT_GE(held.back(), 0);
  }
  const int extra = RawConnect(port_);
  ASSERT_GE(extra, 0);
  EXPECT_LT(TimeUntilClosed(extra, absl::Seconds(10)), kHandshakeTimeout / 2);
  close(extra);
  for (int fd : held) close(fd);
  absl::SleepFor(absl::Milliseconds(100));
  ASSERT_OK(RoundTrip());
}

// A receiver that keeps a payload forever (a stopped reader): the sender's send fails
// DEADLINE_EXCEEDED after transfer_timeout, so the sender's buffer is its own again; the
// peer is gone.
TEST_P(HostilePeerTest, AStalledReceiverFailsTheSendAtTheTransferDeadline) {
  std::unique_ptr<Messenger> client = NewClient(/*max_parked_bytes=*/0);
  ASSERT_NE(client, nullptr);
  std::vector<IncomingData> kept;  // touched on the client's progress thread only
  ASSERT_OK(
      client->RegisterHandler(kBulk, [&kept](PeerId, absl::Span<const uint8_t>, IncomingData data) {
        kept.push_back(std::move(data));
      }));
  ASSERT_OK(client->Connect(address_).status());
  const PeerId peer = LastAccepted();
  const std::vector<uint8_t> payload = Pattern(size_t{16} << 20, 5);
  Completion sent;
  const absl::Time start = absl::Now();
  server_->Send(peer, kBulk, Bytes("bulk"), payload, {.protocol = DataProtocol::kRendezvous},
                sent.Callback());
  ASSERT_TRUE(sent.Wait(absl::Seconds(10)));
  EXPECT_CODE(sent.status(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_GE(absl::Now() - start, kTransferTimeout);
  Completion later;
  server_->Send(peer, kPing, Bytes("x"), {}, {}, later.Callback());
  ASSERT_TRUE(later.Wait());
  EXPECT_FALSE(later.status().ok());
  client.reset();
  ASSERT_OK(RoundTrip());
}

// A client that goes away after its work is an orderly disconnect (logged at INFO), not a
// peer failure; a connection cut mid-message is a failure.
TEST_P(HostilePeerTest, AnOrdinaryDisconnectIsNotAFailure) {
  ASSERT_OK(RoundTrip());
  const absl::Time deadline = absl::Now() + testing::kWaitLimit;
  while (server_->stats().peers_disconnected == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(server_->stats().peers_disconnected, 1u);
  EXPECT_EQ(server_->stats().peer_failures, 0u);
}

INSTANTIATE_TEST_SUITE_P(Transports, HostilePeerTest, ::testing::Values("tcp", "shm,cma,tcp"),
                         TransportName);

}  // namespace
}  // namespace strata::store::transport
