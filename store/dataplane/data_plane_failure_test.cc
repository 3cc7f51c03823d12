// DataPlaneServer under slow and dying clients, over real UCX on loopback: the per-peer
// bounds hold, a client that dies mid-transfer fails only its own requests, its HeldSpans
// are released (NodeEngine::Drain, which waits for every HeldSpan, succeeds), and its lease
// expires by itself.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

#include "store/dataplane/test_blobs.h"
#include "store/dataplane/test_client.h"
#include "strata/base/status_test_macros.h"
#include "strata/store/dataplane/data_plane_server.h"

namespace strata::store::dataplane {
namespace {

namespace wire = transport::wire;
using testing::BlobContent;
using testing::FetchCall;
using testing::MakeBlob;
using testing::PutOverDataPlane;
using testing::ReadPages;
using testing::TestClient;
using testing::WireRanges;

constexpr uint64_t kNodeDramBytes = uint64_t{96} << 20;
// Long enough for a message the node would wrongly send to arrive.
constexpr absl::Duration kSettle = absl::Milliseconds(200);

// True when `done()` holds within `limit` (polled).
template <typename Done>
bool Eventually(Done done, absl::Duration limit = testing::kWaitLimit) {
  const absl::Time deadline = absl::Now() + limit;
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

class DataPlaneFailureTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(engine_,
                         core::NodeEngine::Create(testing::EngineOptions(&clock_, kNodeDramBytes)));
  }
  void TearDown() override {
    clients_.clear();
    server_.reset();
  }
  void StartServer(uint32_t max_sends_per_peer = 8, uint32_t max_fetches_per_peer = 256) {
    ASSERT_OK_AND_ASSIGN(
        server_,
        DataPlaneServer::Start(engine_.get(), {.listen_address = "127.0.0.1:0",
                                               .transports = GetParam(),
                                               .max_sends_per_peer = max_sends_per_peer,
                                               .max_fetches_per_peer = max_fetches_per_peer}));
  }
  TestClient* NewClient(bool hold_data) {
    absl::StatusOr<std::unique_ptr<TestClient>> client =
        TestClient::Connect(server_->address(), {.transports = GetParam(), .hold_data = hold_data});
    EXPECT_OK(client.status());
    if (!client.ok()) return nullptr;
    clients_.push_back(*std::move(client));
    return clients_.back().get();
  }
  // The client dies: its messenger goes, and with it its connection.
  void Kill(TestClient* client) {
    for (auto it = clients_.begin(); it != clients_.end(); ++it) {
      if (it->get() == client) {
        clients_.erase(it);
        return;
      }
    }
  }
  bool ServerIdle() {
    const DataPlaneStats stats = server_->stats();
    return stats.sends_in_flight == 0 && stats.requests_in_flight == 0;
  }

  // A blob of 4 layers x 64 pages x 64 KiB chunks: 16 MiB.
  const radix::Namespace big_ns_ = testing::TestNamespace("acme", 4, 512);
  core::FakeClock clock_;
  std::unique_ptr<core::NodeEngine> engine_;
  std::unique_ptr<DataPlaneServer> server_;
  std::vector<std::unique_ptr<TestClient>> clients_;
};

TEST_P(DataPlaneFailureTest, SendsInFlightPerClientAreBounded) {
  StartServer(/*max_sends_per_peer=*/4);
  TestClient* writer = NewClient(false);
  TestClient* reader = NewClient(/*hold_data=*/true);
  ASSERT_NE(reader, nullptr);
  const radix::Namespace ns = testing::TestNamespace();
  const BlobContent blob = MakeBlob(ns, 8, 20);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, PutOverDataPlane(*engine_, *writer, ns, blob));
  ASSERT_OK_AND_ASSIGN(const core::ReadReply read, ReadPages(*engine_, ns, key, 0, 8));
  // 20 ranges of one chunk each.
  const uint64_t chunk = ns.layout().BytesPerLayerPage();
  std::vector<wire::ByteRange> ranges;
  for (uint64_t i = 0; i < 20; ++i) ranges.push_back({.offset = i * chunk, .length = chunk});
  std::vector<std::vector<uint8_t>> buffers(ranges.size(), std::vector<uint8_t>(chunk));
  std::vector<absl::Span<uint8_t>> dests;
  for (auto& b : buffers) dests.push_back(absl::MakeSpan(b));

  std::shared_ptr<FetchCall> call = reader->StartFetch(read.lease_id, key, ranges, dests);
  ASSERT_TRUE(call->WaitForData(4));
  absl::SleepFor(kSettle);
  EXPECT_EQ(call->data_messages(), 4u) << "the reader took none, so only 4 may be in flight";
  EXPECT_EQ(server_->stats().sends_in_flight, 4u);

  call->AcceptHeld();
  ASSERT_TRUE(call->Wait());
  ASSERT_OK(call->outcome().status);
  for (size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_EQ(0, std::memcmp(buffers[i].data(), blob.bytes.data() + ranges[i].offset, chunk)) << i;
  }
  EXPECT_TRUE(Eventually([this] { return ServerIdle(); }));
}

TEST_P(DataPlaneFailureTest, TooManyUnfinishedFetchesFromOneClientAreRefused) {
  StartServer(/*max_sends_per_peer=*/1, /*max_fetches_per_peer=*/2);
  TestClient* writer = NewClient(false);
  TestClient* reader = NewClient(/*hold_data=*/true);
  ASSERT_NE(reader, nullptr);
  const radix::Namespace ns = testing::TestNamespace();
  const BlobContent blob = MakeBlob(ns, 2, 21);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, PutOverDataPlane(*engine_, *writer, ns, blob));
  ASSERT_OK_AND_ASSIGN(const core::ReadReply read, ReadPages(*engine_, ns, key, 0, 2));
  const std::vector<wire::ByteRange> ranges = WireRanges(read.ranges[0]);
  std::vector<std::vector<uint8_t>> buffers(3 * ranges.size());
  std::vector<std::shared_ptr<FetchCall>> calls;
  for (int c = 0; c < 3; ++c) {
    std::vector<absl::Span<uint8_t>> dests;
    for (size_t i = 0; i < ranges.size(); ++i) {
      buffers[c * ranges.size() + i].resize(ranges[i].length);
      dests.push_back(absl::MakeSpan(buffers[c * ranges.size() + i]));
    }
    calls.push_back(reader->StartFetch(read.lease_id, key, ranges, dests));
  }
  ASSERT_TRUE(calls[2]->Wait());
  EXPECT_CODE(calls[2]->outcome().status, absl::StatusCode::kResourceExhausted);
  // The first two are served in order as the reader takes their bytes.
  for (int c = 0; c < 2; ++c) {
    ASSERT_TRUE(calls[c]->WaitForData(1));
    calls[c]->AcceptHeld();
    ASSERT_TRUE(calls[c]->Wait());
    EXPECT_OK(calls[c]->outcome().status) << c;
  }
}

TEST_P(DataPlaneFailureTest, AClientDyingMidFetchFailsOnlyItsOwnRequestAndLeaksNothing) {
  StartServer();
  TestClient* writer = NewClient(false);
  ASSERT_NE(writer, nullptr);
  const BlobContent blob = MakeBlob(big_ns_, 64, 22);
  ASSERT_EQ(blob.bytes.size(), size_t{16} << 20);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key,
                       PutOverDataPlane(*engine_, *writer, big_ns_, blob, /*pieces=*/4));

  // The doomed reader asks for the whole blob and takes none of it.
  ASSERT_OK_AND_ASSIGN(const core::ReadReply doomed_read, ReadPages(*engine_, big_ns_, key, 0, 64));
  const std::vector<wire::ByteRange> ranges = WireRanges(doomed_read.ranges[0]);
  std::vector<std::vector<uint8_t>> doomed_buffers(ranges.size(),
                                                   std::vector<uint8_t>(ranges[0].length));
  std::vector<absl::Span<uint8_t>> doomed_dests;
  for (auto& b : doomed_buffers) doomed_dests.push_back(absl::MakeSpan(b));
  TestClient* doomed = NewClient(/*hold_data=*/true);
  ASSERT_NE(doomed, nullptr);
  std::shared_ptr<FetchCall> doomed_call =
      doomed->StartFetch(doomed_read.lease_id, key, ranges, doomed_dests);
  ASSERT_TRUE(doomed_call->WaitForData(ranges.size()));
  EXPECT_EQ(server_->stats().sends_in_flight, ranges.size());

  // Meanwhile another reader is served in full.
  ASSERT_OK_AND_ASSIGN(const core::ReadReply read, ReadPages(*engine_, big_ns_, key, 0, 64));
  std::vector<std::vector<uint8_t>> buffers(ranges.size(), std::vector<uint8_t>(ranges[0].length));
  std::vector<absl::Span<uint8_t>> dests;
  for (auto& b : buffers) dests.push_back(absl::MakeSpan(b));
  TestClient* healthy = NewClient(false);
  ASSERT_NE(healthy, nullptr);
  const testing::FetchOutcome got = healthy->Fetch(read.lease_id, key, ranges, dests);
  ASSERT_OK(got.status);
  for (size_t i = 0; i < ranges.size(); ++i) {
    ASSERT_EQ(
        0, std::memcmp(buffers[i].data(), blob.bytes.data() + ranges[i].offset, buffers[i].size()));
  }
  ASSERT_OK(engine_->Release(read.lease_id));

  // The doomed reader dies with all its sends in flight.
  const uint64_t failures_before = server_->stats().fetch_failures;
  Kill(doomed);
  // The failed sends can complete before UCX reports the endpoint's failure: wait for both.
  ASSERT_TRUE(Eventually([this] { return ServerIdle() && server_->stats().peers_failed >= 1; }));
  const DataPlaneStats stats = server_->stats();
  EXPECT_GE(stats.peers_failed, 1u);
  EXPECT_EQ(stats.fetch_failures, failures_before + 1);

  // Its lease is still held (nobody released it), so the engine is not drained yet; once
  // the lease expires and is reaped, nothing holds any bytes: Drain succeeds, which also
  // proves no HeldSpan survived the failed sends.
  EXPECT_CODE(engine_->Drain(absl::Milliseconds(50)), absl::StatusCode::kDeadlineExceeded);
  clock_.Advance(engine_->options().default_lease_ttl + absl::Seconds(1));
  EXPECT_EQ(engine_->ReapExpired().leases_expired, 1u);
  EXPECT_OK(engine_->Drain(absl::Seconds(5)));

  // Draining stops puts, not reads: the server still serves a new reader.
  ASSERT_OK_AND_ASSIGN(const core::ReadReply again, ReadPages(*engine_, big_ns_, key, 0, 1));
  std::vector<uint8_t> first(ranges[0].length / 64);
  TestClient* late = NewClient(false);
  ASSERT_NE(late, nullptr);
  const std::vector<wire::ByteRange> first_range = {WireRanges(again.ranges[0])[0]};
  EXPECT_OK(late->Fetch(again.lease_id, key, first_range, {absl::MakeSpan(first)}).status);
  EXPECT_EQ(0, std::memcmp(first.data(), blob.bytes.data(), first.size()));
}

TEST_P(DataPlaneFailureTest, AWriterDyingMidPutLeavesThePutToBeAbortedOrRetried) {
  StartServer();
  const BlobContent blob = MakeBlob(big_ns_, 64, 23);
  ASSERT_OK_AND_ASSIGN(const core::BeginPutReply begin,
                       engine_->BeginPut(big_ns_, testing::PutRequestFor(blob)));
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<TestClient> doomed,
                         TestClient::Connect(server_->address(), {.transports = GetParam()}));
    // Send 16 MiB and die at once: the node received all, part or none of it.
    const auto header = wire::EncodePutDataHeader(
        {.request_id = doomed->NextRequestId(), .put_id = begin.put_id, .offset = 0});
    doomed->messenger().Send(doomed->peer(), static_cast<uint16_t>(wire::MessageType::kPutData),
                             header, blob.bytes, {.protocol = transport::DataProtocol::kRendezvous},
                             [](absl::Status) {});
  }
  ASSERT_TRUE(Eventually([this] { return ServerIdle(); }));
  // Whatever arrived, the HeldSpan of the target is gone: a retry completes the put.
  TestClient* retry = NewClient(false);
  ASSERT_NE(retry, nullptr);
  ASSERT_OK(retry->Put(begin.put_id, 0, blob.bytes));
  ASSERT_OK(engine_->CommitPut(begin.put_id).status());
  EXPECT_OK(engine_->Drain(absl::Seconds(5)));
}

// A PUT (a put in one round trip) whose writer dies after the node began it, before every
// byte landed: the node aborts the put at once (no wait for the put TTL), frees its
// reservation, and the key can be put again.
TEST_P(DataPlaneFailureTest, AWriterDyingMidPutOfOneRoundTripAbortsItsPutAtOnce) {
  StartServer();
  const BlobContent blob = MakeBlob(big_ns_, 64, 25);
  auto [header, payload] = testing::PutMessage(big_ns_, blob);
  header.request_id = 1;
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<TestClient> doomed,
                         TestClient::Connect(server_->address(), {.transports = GetParam()}));
    doomed->messenger().Send(doomed->peer(), static_cast<uint16_t>(wire::MessageType::kPut),
                             wire::EncodePutHeader(header), payload, {}, [](absl::Status) {});
    // Half the blob, then the writer is gone.
    const auto piece = wire::EncodePutDataHeader({.put_id = 1, .offset = 0, .of_put = true});
    doomed->messenger().Send(doomed->peer(), static_cast<uint16_t>(wire::MessageType::kPutData),
                             piece, absl::MakeConstSpan(blob.bytes).first(blob.bytes.size() / 2),
                             {.protocol = transport::DataProtocol::kRendezvous},
                             [](absl::Status) {});
    ASSERT_TRUE(Eventually([this] { return engine_->Tiers().engine.pending_puts == 1; }));
  }
  ASSERT_TRUE(Eventually([this] { return engine_->Tiers().engine.pending_puts == 0; }));
  ASSERT_TRUE(Eventually([this] { return ServerIdle(); }));
  EXPECT_EQ(engine_->Tiers().engine.blobs, 0u);
  // Nothing of it is left: the same put from a new writer commits.
  TestClient* retry = NewClient(false);
  ASSERT_NE(retry, nullptr);
  ASSERT_OK(retry->SendPut(wire::EncodePutHeader(header), payload, 1,
                           {{0, absl::MakeConstSpan(blob.bytes)}}));
  EXPECT_EQ(engine_->Tiers().engine.blobs, 1u);
  EXPECT_OK(engine_->Drain(absl::Seconds(5)));
}

TEST_P(DataPlaneFailureTest, StoppingWithSendsInFlightReleasesEveryHeldSpan) {
  StartServer();
  TestClient* writer = NewClient(false);
  ASSERT_NE(writer, nullptr);
  const BlobContent blob = MakeBlob(big_ns_, 16, 24);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key,
                       PutOverDataPlane(*engine_, *writer, big_ns_, blob));
  ASSERT_OK_AND_ASSIGN(const core::ReadReply read, ReadPages(*engine_, big_ns_, key, 0, 16));
  const std::vector<wire::ByteRange> ranges = WireRanges(read.ranges[0]);
  std::vector<std::vector<uint8_t>> buffers(ranges.size(), std::vector<uint8_t>(ranges[0].length));
  std::vector<absl::Span<uint8_t>> dests;
  for (auto& b : buffers) dests.push_back(absl::MakeSpan(b));
  TestClient* reader = NewClient(/*hold_data=*/true);
  ASSERT_NE(reader, nullptr);
  std::shared_ptr<FetchCall> call = reader->StartFetch(read.lease_id, key, ranges, dests);
  ASSERT_TRUE(call->WaitForData(ranges.size()));

  server_->Stop();
  server_->Stop();  // idempotent
  const DataPlaneStats stats = server_->stats();
  EXPECT_EQ(stats.sends_in_flight, 0u);
  EXPECT_EQ(stats.requests_in_flight, 0u);
  ASSERT_OK(engine_->Release(read.lease_id));
  EXPECT_OK(engine_->Drain(absl::Seconds(5)));
}

INSTANTIATE_TEST_SUITE_P(Transports, DataPlaneFailureTest, ::testing::Values("tcp", ""),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param.empty() ? std::string("Default") : info.param;
                         });

}  // namespace
}  // namespace strata::store::dataplane
