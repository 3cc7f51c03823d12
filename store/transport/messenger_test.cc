// Messenger over real UCX: two messengers (two contexts, workers and progress threads) in one
// process on loopback, once per transport (UCX_TLS values that UCX 1.13 supports here).
#include "strata/store/transport/messenger.h"

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

#include "store/transport/messenger_test_util.h"
#include "strata/base/status_test_macros.h"

namespace strata::store::transport {
namespace {

using testing::Bytes;
using testing::Completion;
using testing::Pattern;
using testing::Text;
using testing::TransportName;

constexpr size_t kGuard = 64;  // bytes around each destination that must stay untouched
constexpr uint8_t kGuardByte = 0xEE;

class MessengerTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    MessengerOptions server_options;
    server_options.name = "server";
    server_options.transports = GetParam();
    server_options.on_peer_connected = [this](PeerId peer, absl::Status) {
      absl::MutexLock lock(&mu_);
      accepted_.push_back(peer);
    };
    ASSERT_OK_AND_ASSIGN(server_, Messenger::Create(std::move(server_options)));
    MessengerOptions client_options;
    client_options.name = "client";
    client_options.transports = GetParam();
    ASSERT_OK_AND_ASSIGN(client_, Messenger::Create(std::move(client_options)));
    ASSERT_OK_AND_ASSIGN(const uint16_t port, server_->Listen("127.0.0.1:0"));
    ASSERT_NE(port, 0);
    address_ = absl::StrCat("127.0.0.1:", port);
    ASSERT_OK_AND_ASSIGN(to_server_, client_->Connect(address_));
  }

  // The server's PeerId for our client, once the server announced it.
  PeerId AcceptedPeer() {
    absl::MutexLock lock(&mu_);
    auto have_one = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !accepted_.empty(); };
    EXPECT_TRUE(mu_.AwaitWithTimeout(absl::Condition(&have_one), testing::kWaitLimit));
    return accepted_.empty() ? PeerId::kNone : accepted_.front();
  }

  // Declared before the messengers: their callbacks touch it until they are destroyed.
  absl::Mutex mu_;
  std::vector<PeerId> accepted_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Messenger> server_;
  std::unique_ptr<Messenger> client_;
  std::string address_;
  PeerId to_server_ = PeerId::kNone;
};

// A buffer with guard bytes on both sides; payload() is the middle.
struct GuardedBuffer {
  explicit GuardedBuffer(size_t size) : size(size), bytes(size + 2 * kGuard, kGuardByte) {}
  absl::Span<uint8_t> payload() { return absl::MakeSpan(bytes).subspan(kGuard, size); }
  bool GuardsIntact() const {
    for (size_t i = 0; i < kGuard; ++i) {
      if (bytes[i] != kGuardByte || bytes[kGuard + size + i] != kGuardByte) return false;
    }
    return true;
  }
  bool Holds(const std::vector<uint8_t>& expected) const {
    return expected.size() == size &&
           std::memcmp(bytes.data() + kGuard, expected.data(), size) == 0;
  }
  size_t size;
  std::vector<uint8_t> bytes;
};

TEST_P(MessengerTest, HeaderOnlyMessagesRoundTripBetweenPeers) {
  ASSERT_OK(server_->RegisterHandler(
      1, [this](PeerId from, absl::Span<const uint8_t> header, IncomingData data) {
        EXPECT_TRUE(server_->OnProgressThread());
        EXPECT_EQ(data.size(), 0u);
        server_->Send(from, 2, header, {}, {}, [](absl::Status s) { EXPECT_OK(s); });
      }));
  Completion got;
  std::string reply;
  PeerId reply_from = PeerId::kNone;
  ASSERT_OK(
      client_->RegisterHandler(2, [&](PeerId from, absl::Span<const uint8_t> header, IncomingData) {
        reply = Text(header);
        reply_from = from;
        got.Callback()(absl::OkStatus());
      }));
  Completion sent;
  client_->Send(to_server_, 1, Bytes("hello, node"), {}, {}, sent.Callback());
  ASSERT_TRUE(sent.Wait());
  EXPECT_OK(sent.status());
  ASSERT_TRUE(got.Wait());
  EXPECT_EQ(reply, "hello, node");
  EXPECT_EQ(reply_from, to_server_);
  EXPECT_NE(AcceptedPeer(), PeerId::kNone);
  EXPECT_FALSE(client_->OnProgressThread());
}

// A message whose id the receiver never registered is dropped (eager or rendezvous: the
// sender's rendezvous ends ABORTED) and the receiver keeps going.
TEST_P(MessengerTest, MessagesWithoutAHandlerAreDroppedAndTheReceiverSurvives) {
  Completion eager;
  client_->Send(to_server_, 9, Bytes("nobody listens"), {}, {}, eager.Callback());
  ASSERT_TRUE(eager.Wait());
  EXPECT_OK(eager.status());
  const std::vector<uint8_t> payload(1 << 20, 0x5A);
  Completion bulk;
  client_->Send(to_server_, 10, Bytes("bulk"), payload, {.protocol = DataProtocol::kRendezvous},
                bulk.Callback());
  ASSERT_TRUE(bulk.Wait());
  EXPECT_EQ(bulk.status().code(), absl::StatusCode::kAborted) << bulk.status();

  Completion got;
  ASSERT_OK(server_->RegisterHandler(9, [&](PeerId, absl::Span<const uint8_t>, IncomingData) {
    got.Callback()(absl::OkStatus());
  }));
  Completion sent;
  client_->Send(to_server_, 9, Bytes("now it does"), {}, {}, sent.Callback());
  ASSERT_TRUE(got.Wait());
  ASSERT_TRUE(sent.Wait());
  EXPECT_OK(sent.status());
}

// Every peer has the messenger's own TCP stream; "tcp" keeps everything there; with shared
// memory allowed, a same-host peer's messages move to a UCX data endpoint on shared memory
// (AM) and CMA (rendezvous) — never UCX's tcp.
TEST_P(MessengerTest, UsesTheTransportsAskedFor) {
  ASSERT_OK_AND_ASSIGN(const std::string lanes, client_->DescribePeer(to_server_));
  const bool shared_memory = GetParam().find("shm") != std::string::npos;
  EXPECT_NE(lanes.find("stream: tcp 127.0.0.1:"), std::string::npos) << lanes;
  const size_t data = lanes.find("data endpoint");
  if (!shared_memory) {
    EXPECT_EQ(data, std::string::npos) << lanes;
    return;
  }
  ASSERT_NE(data, std::string::npos) << lanes;
  const std::string data_lanes = lanes.substr(data);
  EXPECT_TRUE(data_lanes.find("sysv/") != std::string::npos ||
              data_lanes.find("posix/") != std::string::npos)
      << data_lanes;
  EXPECT_NE(data_lanes.find("cma/"), std::string::npos) << data_lanes;
  EXPECT_EQ(data_lanes.find("tcp/"), std::string::npos) << data_lanes;
}

// Bulk sends use the rendezvous protocol and land byte-exact in the buffer the receiving
// handler chose, without touching a byte around it.
TEST_P(MessengerTest, RendezvousPayloadLandsByteExactInCallerBuffer) {
  for (size_t size : {size_t{4} << 10, size_t{1} << 20, size_t{16} << 20}) {
    SCOPED_TRACE(size);
    const std::vector<uint8_t> source = Pattern(size, size);
    GuardedBuffer dest(size);
    Completion received;
    bool rendezvous = false;
    size_t announced = 0;
    std::string header;
    ASSERT_OK(
        server_->RegisterHandler(3, [&](PeerId, absl::Span<const uint8_t> h, IncomingData data) {
          rendezvous = data.is_rendezvous();
          announced = data.size();
          header = Text(h);
          EXPECT_TRUE(data.eager_bytes().empty());
          data.Accept(dest.payload(), received.Callback());
        }));
    Completion sent;
    client_->Send(to_server_, 3, Bytes("put"), source, {.protocol = DataProtocol::kRendezvous},
                  sent.Callback());
    ASSERT_TRUE(received.Wait());
    ASSERT_TRUE(sent.Wait());
    EXPECT_OK(received.status());
    EXPECT_OK(sent.status());
    EXPECT_TRUE(rendezvous);
    EXPECT_EQ(announced, size);
    EXPECT_EQ(header, "put");
    EXPECT_TRUE(dest.Holds(source));
    EXPECT_TRUE(dest.GuardsIntact());
  }
}

// The node's direction: a small request, answered with bulk bytes into the client's buffer.
TEST_P(MessengerTest, ServerAnswersARequestWithBulkBytes) {
  const size_t size = size_t{16} << 20;
  const std::vector<uint8_t> blob = Pattern(size, 7);
  Completion served;  // `blob` is borrowed until the server's send completes
  ASSERT_OK(server_->RegisterHandler(4, [&](PeerId from, absl::Span<const uint8_t>, IncomingData) {
    server_->Send(from, 5, Bytes("data"), blob, {.protocol = DataProtocol::kRendezvous},
                  served.Callback());
  }));
  GuardedBuffer dest(size);
  Completion landed;
  ASSERT_OK(
      client_->RegisterHandler(5, [&](PeerId from, absl::Span<const uint8_t>, IncomingData data) {
        EXPECT_EQ(from, to_server_);
        data.Accept(dest.payload(), landed.Callback());
      }));
  client_->Send(to_server_, 4, Bytes("fetch"), {}, {}, [](absl::Status s) { EXPECT_OK(s); });
  ASSERT_TRUE(landed.Wait());
  ASSERT_TRUE(served.Wait());
  EXPECT_OK(landed.status());
  EXPECT_OK(served.status());
  EXPECT_TRUE(dest.Holds(blob));
  EXPECT_TRUE(dest.GuardsIntact());
}

TEST_P(MessengerTest, EagerPayloadIsVisibleInHandlerAndCopiedOnAccept) {
  const std::vector<uint8_t> source = Pattern(200, 3);
  GuardedBuffer dest(source.size());
  std::vector<uint8_t> seen;
  bool rendezvous = true;
  bool completed_inline = false;
  absl::Status received;
  Completion handler_done;  // the handler's last act: the test may return after it
  ASSERT_OK(server_->RegisterHandler(6, [&](PeerId, absl::Span<const uint8_t>, IncomingData data) {
    rendezvous = data.is_rendezvous();
    seen.assign(data.eager_bytes().begin(), data.eager_bytes().end());
    bool completed = false;
    data.Accept(dest.payload(), [&](absl::Status s) {
      received = s;
      completed = true;
    });
    completed_inline = completed;  // eager Accept on the progress thread completes at once
    handler_done.Callback()(absl::OkStatus());
  }));
  Completion sent;  // `source` is borrowed until the send completes
  client_->Send(to_server_, 6, {}, source, {.protocol = DataProtocol::kEager}, sent.Callback());
  ASSERT_TRUE(handler_done.Wait());
  ASSERT_TRUE(sent.Wait());
  EXPECT_OK(sent.status());
  EXPECT_TRUE(completed_inline);
  EXPECT_OK(received);
  EXPECT_FALSE(rendezvous);
  EXPECT_EQ(seen, source);
  EXPECT_TRUE(dest.Holds(source));
  EXPECT_TRUE(dest.GuardsIntact());
}

// A handler may keep the descriptor and let another thread decide where the bytes go.
TEST_P(MessengerTest, KeptDescriptorsAreAcceptedLaterFromAnotherThread) {
  absl::Mutex mu;
  std::vector<IncomingData> kept;  // guarded by mu
  ASSERT_OK(server_->RegisterHandler(7, [&](PeerId, absl::Span<const uint8_t>, IncomingData data) {
    absl::MutexLock lock(&mu);
    kept.push_back(std::move(data));
  }));
  const std::vector<uint8_t> bulk = Pattern(size_t{1} << 20, 11);
  const std::vector<uint8_t> small = Pattern(64, 12);
  Completion bulk_sent, small_sent;
  client_->Send(to_server_, 7, {}, bulk, {.protocol = DataProtocol::kRendezvous},
                bulk_sent.Callback());
  client_->Send(to_server_, 7, {}, small, {.protocol = DataProtocol::kEager},
                small_sent.Callback());
  {
    absl::MutexLock lock(&mu);
    auto both = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return kept.size() == 2; };
    ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&both), testing::kWaitLimit));
  }
  EXPECT_FALSE(bulk_sent.done()) << "the rendezvous sender waits for the receiver's decision";
  GuardedBuffer bulk_dest(bulk.size()), small_dest(small.size());
  Completion bulk_in, small_in;
  std::thread decider([&] {
    absl::MutexLock lock(&mu);
    for (IncomingData& data : kept) {
      if (data.is_rendezvous()) {
        data.Accept(bulk_dest.payload(), bulk_in.Callback());
      } else {
        EXPECT_EQ(std::vector<uint8_t>(data.eager_bytes().begin(), data.eager_bytes().end()),
                  small);
        data.Accept(small_dest.payload(), small_in.Callback());
      }
    }
  });
  decider.join();
  ASSERT_TRUE(bulk_in.Wait());
  ASSERT_TRUE(small_in.Wait());
  ASSERT_TRUE(bulk_sent.Wait());
  ASSERT_TRUE(small_sent.Wait());
  EXPECT_OK(bulk_in.status());
  EXPECT_OK(small_in.status());
  EXPECT_OK(bulk_sent.status());
  EXPECT_OK(small_sent.status());
  EXPECT_TRUE(bulk_dest.Holds(bulk));
  EXPECT_TRUE(small_dest.Holds(small));
}

TEST_P(MessengerTest, RendezvousDroppedInHandlerFailsTheSenderAborted) {
  ASSERT_OK(server_->RegisterHandler(
      8, [](PeerId, absl::Span<const uint8_t>, IncomingData data) { data.Drop(); }));
  const std::vector<uint8_t> source = Pattern(size_t{1} << 20, 5);
  Completion sent;
  client_->Send(to_server_, 8, {}, source, {.protocol = DataProtocol::kRendezvous},
                sent.Callback());
  ASSERT_TRUE(sent.Wait());
  EXPECT_CODE(sent.status(), absl::StatusCode::kAborted);
}

TEST_P(MessengerTest, AcceptIntoASmallerBufferIsInvalidArgument) {
  Completion received;
  ASSERT_OK(server_->RegisterHandler(9, [&](PeerId, absl::Span<const uint8_t>, IncomingData data) {
    static std::vector<uint8_t> too_small(100);
    data.Accept(absl::MakeSpan(too_small), received.Callback());
  }));
  const std::vector<uint8_t> source = Pattern(size_t{64} << 10, 5);
  Completion sent;
  client_->Send(to_server_, 9, {}, source, {.protocol = DataProtocol::kRendezvous},
                sent.Callback());
  ASSERT_TRUE(received.Wait());
  EXPECT_CODE(received.status(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(sent.Wait());
  EXPECT_FALSE(sent.status().ok()) << "the sender learns its payload was refused";
}

// Several client threads send at once; every payload lands in its own slot.
TEST_P(MessengerTest, ManyConcurrentSendsAllLand) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 32;
  constexpr size_t kSize = size_t{256} << 10;
  std::vector<uint8_t> sink(kThreads * kPerThread * kSize, 0);
  std::atomic<int> landed{0};
  std::atomic<int> failed{0};
  ASSERT_OK(server_->RegisterHandler(
      10, [&](PeerId, absl::Span<const uint8_t> header, IncomingData data) {
        uint32_t slot = 0;
        ASSERT_EQ(header.size(), sizeof(slot));
        std::memcpy(&slot, header.data(), sizeof(slot));
        data.Accept(absl::MakeSpan(sink).subspan(slot * kSize, kSize),
                    [&](absl::Status s) { (s.ok() ? landed : failed).fetch_add(1); });
      }));
  std::vector<std::vector<uint8_t>> sources(kThreads * kPerThread);
  for (size_t i = 0; i < sources.size(); ++i) sources[i] = Pattern(kSize, 1000 + i);
  std::atomic<int> sent_ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const uint32_t slot = t * kPerThread + i;
        uint8_t header[sizeof(slot)];
        std::memcpy(header, &slot, sizeof(slot));
        // Alternate protocols: both must work side by side.
        const DataProtocol protocol = i % 2 ? DataProtocol::kRendezvous : DataProtocol::kAuto;
        client_->Send(to_server_, 10, header, sources[slot], {.protocol = protocol},
                      [&](absl::Status s) {
                        EXPECT_OK(s);
                        if (s.ok()) sent_ok.fetch_add(1);
                      });
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const absl::Time deadline = absl::Now() + testing::kWaitLimit;
  while ((landed.load() + failed.load() < kThreads * kPerThread ||
          sent_ok.load() < kThreads * kPerThread) &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(landed.load(), kThreads * kPerThread);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(sent_ok.load(), kThreads * kPerThread);
  for (size_t i = 0; i < sources.size(); ++i) {
    ASSERT_EQ(std::memcmp(sink.data() + i * kSize, sources[i].data(), kSize), 0) << "slot " << i;
  }
  const MessengerStats client_stats = client_->stats();
  EXPECT_EQ(client_stats.messages_sent, uint64_t{kThreads * kPerThread});
  EXPECT_EQ(client_stats.payload_bytes_sent, uint64_t{kThreads * kPerThread * kSize});
  EXPECT_EQ(server_->stats().payload_bytes_received, uint64_t{kThreads * kPerThread * kSize});
}

TEST_P(MessengerTest, RejectsOversizedHeadersAndUnknownPeers) {
  EXPECT_GT(client_->max_header_size(), size_t{1024});
  const std::vector<uint8_t> huge(client_->max_header_size() + 1);
  Completion too_big;
  client_->Send(to_server_, 1, huge, {}, {}, too_big.Callback());
  ASSERT_TRUE(too_big.Wait());
  EXPECT_CODE(too_big.status(), absl::StatusCode::kInvalidArgument);

  Completion unknown;
  client_->Send(static_cast<PeerId>(999), 1, {}, {}, {}, unknown.Callback());
  ASSERT_TRUE(unknown.Wait());
  EXPECT_CODE(unknown.status(), absl::StatusCode::kInvalidArgument);

  client_->Disconnect(to_server_);
  Completion after;
  client_->Send(to_server_, 1, {}, {}, {}, after.Callback());
  ASSERT_TRUE(after.Wait());
  EXPECT_CODE(after.status(), absl::StatusCode::kUnavailable);
}

TEST_P(MessengerTest, RegisteredRegionsCarryPayloadsAndBoundThem) {
  const size_t size = size_t{4} << 20;
  std::vector<uint8_t> source = Pattern(size, 21);
  std::vector<uint8_t> dest(size, 0);
  ASSERT_OK_AND_ASSIGN(auto source_region, client_->RegisterMemory(source.data(), size));
  ASSERT_OK_AND_ASSIGN(auto dest_region, server_->RegisterMemory(dest.data(), size));
  EXPECT_TRUE(dest_region->Contains(dest.data() + 10, size - 10));
  EXPECT_FALSE(dest_region->Contains(dest.data() + 10, size));
  EXPECT_CODE(server_->RegisterMemory(nullptr, 10), absl::StatusCode::kInvalidArgument);

  Completion received;
  ASSERT_OK(server_->RegisterHandler(11, [&](PeerId, absl::Span<const uint8_t>, IncomingData data) {
    data.Accept(absl::MakeSpan(dest), received.Callback(), dest_region.get());
  }));
  Completion sent;
  client_->Send(to_server_, 11, {}, source,
                {.protocol = DataProtocol::kRendezvous, .region = source_region.get()},
                sent.Callback());
  ASSERT_TRUE(received.Wait());
  ASSERT_TRUE(sent.Wait());
  EXPECT_OK(received.status());
  EXPECT_OK(sent.status());
  EXPECT_EQ(dest, source);

  std::vector<uint8_t> elsewhere(16);
  Completion outside;
  client_->Send(to_server_, 11, {}, elsewhere, {.region = source_region.get()}, outside.Callback());
  ASSERT_TRUE(outside.Wait());
  EXPECT_CODE(outside.status(), absl::StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Transports, MessengerTest, ::testing::Values("tcp", "shm,cma,tcp"),
                         TransportName);

// Connecting to a port nobody listens on fails UNAVAILABLE, promptly.
TEST(MessengerConnectTest, RefusedConnectionIsUnavailable) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const uint16_t port = ntohs(addr.sin_port);
  close(fd);  // now nobody listens there

  ASSERT_OK_AND_ASSIGN(auto client, Messenger::Create({.name = "client", .transports = "tcp"}));
  const absl::Time start = absl::Now();
  EXPECT_CODE(client->Connect(absl::StrCat("127.0.0.1:", port), absl::Seconds(10)),
              absl::StatusCode::kUnavailable);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_CODE(client->Connect("127.0.0.1", absl::Seconds(1)), absl::StatusCode::kInvalidArgument);
}

TEST(MessengerConnectTest, UnknownTransportIsInvalidArgument) {
  EXPECT_FALSE(Messenger::Create({.name = "x", .transports = "no_such_transport"}).ok());
}

}  // namespace
}  // namespace strata::store::transport
