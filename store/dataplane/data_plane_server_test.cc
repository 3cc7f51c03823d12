// DataPlaneServer over real UCX on loopback: a NodeEngine, the server on port 0 and a bare
// client messenger (test_client.h), once over TCP only and once with UCX's default
// transports (same-host shared memory and CMA on this machine).
#include "strata/store/dataplane/data_plane_server.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

#include "store/dataplane/test_blobs.h"
#include "store/dataplane/test_client.h"
#include "strata/base/status_test_macros.h"
#include "strata/store/core/chunk_checksum.h"

namespace strata::store::dataplane {
namespace {

namespace wire = transport::wire;
using testing::BlobContent;
using testing::FetchOutcome;
using testing::MakeBlob;
using testing::PutMessage;
using testing::PutOverDataPlane;
using testing::ReadPages;
using testing::TestClient;
using testing::WireRanges;

constexpr uint64_t kDramBytes = uint64_t{64} << 20;

class DataPlaneServerTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(engine_,
                         core::NodeEngine::Create(testing::EngineOptions(&clock_, kDramBytes)));
    ASSERT_OK_AND_ASSIGN(server_, DataPlaneServer::Start(engine_.get(), ServerOptions()));
    ASSERT_OK_AND_ASSIGN(client_, TestClient::Connect(server_->address(), ClientOptions()));
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
  }
  DataPlaneOptions ServerOptions() const {
    return DataPlaneOptions{.listen_address = "127.0.0.1:0", .transports = GetParam()};
  }
  testing::TestClientOptions ClientOptions() const { return {.transports = GetParam()}; }

  // Buffers for `ranges`, one each.
  static std::vector<std::vector<uint8_t>> BuffersFor(const std::vector<wire::ByteRange>& ranges) {
    std::vector<std::vector<uint8_t>> buffers;
    for (const wire::ByteRange& r : ranges) buffers.emplace_back(r.length, 0xEE);
    return buffers;
  }
  static std::vector<absl::Span<uint8_t>> Spans(std::vector<std::vector<uint8_t>>& buffers) {
    std::vector<absl::Span<uint8_t>> spans;
    for (auto& b : buffers) spans.push_back(absl::MakeSpan(b));
    return spans;
  }
  // Fetches `ranges` into fresh buffers.
  FetchOutcome FetchInto(uint64_t lease, const radix::BlobKey& key,
                         const std::vector<wire::ByteRange>& ranges,
                         std::vector<std::vector<uint8_t>>* buffers) {
    *buffers = BuffersFor(ranges);
    return client_->Fetch(lease, key, ranges, Spans(*buffers));
  }

  core::FakeClock clock_;
  std::unique_ptr<core::NodeEngine> engine_;
  std::unique_ptr<DataPlaneServer> server_;
  std::unique_ptr<TestClient> client_;
  const radix::Namespace ns_ = testing::TestNamespace();
};

TEST_P(DataPlaneServerTest, ReportsTheBoundPort) {
  EXPECT_NE(server_->port(), 0);
  EXPECT_EQ(server_->address(), absl::StrCat("127.0.0.1:", server_->port()));
  // The address is taken while the server runs.
  DataPlaneOptions same = ServerOptions();
  same.listen_address = server_->address();
  EXPECT_CODE(DataPlaneServer::Start(engine_.get(), same).status(), absl::StatusCode::kUnavailable);
  same.listen_address = "no-port";
  EXPECT_CODE(DataPlaneServer::Start(engine_.get(), same).status(),
              absl::StatusCode::kInvalidArgument);
}

// "tcp" keeps everything on TCP; UCX's default (UCX_TLS unset) moves this same-host client's
// messages to shared memory and its rendezvous payloads to CMA (store/transport).
TEST_P(DataPlaneServerTest, UsesTheTransportsAskedFor) {
  ASSERT_OK_AND_ASSIGN(const std::string lanes, client_->messenger().DescribePeer(client_->peer()));
  if (GetParam() == "tcp") {
    EXPECT_EQ(lanes.find("data endpoint"), std::string::npos) << lanes;
  } else if (std::getenv("UCX_TLS") == nullptr) {
    const size_t data = lanes.find("data endpoint");
    ASSERT_NE(data, std::string::npos) << lanes;
    EXPECT_NE(lanes.find("cma/", data), std::string::npos) << lanes;
  }
}

TEST_P(DataPlaneServerTest, PutOverTheDataPlaneThenCommitMakesTheBlobVisible) {
  const BlobContent blob = MakeBlob(ns_, 8, 1);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key,
                       PutOverDataPlane(*engine_, *client_, ns_, blob, /*pieces=*/5));
  // CommitPut verified every chunk checksum against the bytes that landed in the arena.
  ASSERT_OK_AND_ASSIGN(const report::MatchResult match, engine_->Match(ns_, blob.tokens));
  EXPECT_EQ(match.matched_pages, 8u);
  ASSERT_OK_AND_ASSIGN(const core::BlobInfo info, engine_->Stat(key));
  EXPECT_EQ(info.blob_checksum, core::BlobChecksum(blob.checksums));
  const DataPlaneStats stats = server_->stats();
  EXPECT_EQ(stats.put_requests, 5u);
  EXPECT_EQ(stats.put_failures, 0u);
  EXPECT_EQ(stats.bytes_in, blob.bytes.size());
  EXPECT_OK(server_->WaitIdle(absl::Seconds(5)));
  // Each PUT_DATA is timed once its PUT_DONE went out (before the server is idle).
  const base::HistogramSnapshot put_latency = server_->stats().put_latency;
  EXPECT_EQ(put_latency.count, 5u);
  EXPECT_GT(put_latency.sum_seconds, 0.0);
  EXPECT_EQ(server_->stats().fetch_latency.count, 0u);
}

TEST_P(DataPlaneServerTest, CorruptedPutBytesFailTheCommitWithDataLoss) {
  BlobContent blob = MakeBlob(ns_, 2, 2);
  ASSERT_OK_AND_ASSIGN(const core::BeginPutReply begin,
                       engine_->BeginPut(ns_, testing::PutRequestFor(blob)));
  blob.bytes[blob.bytes.size() / 2] ^= 0x01;
  ASSERT_OK(client_->Put(begin.put_id, 0, blob.bytes));
  EXPECT_CODE(engine_->CommitPut(begin.put_id).status(), absl::StatusCode::kDataLoss);
}

TEST_P(DataPlaneServerTest, FetchesAPrefixOfPagesOfEveryLayerByteExact) {
  const BlobContent blob = MakeBlob(ns_, 8, 3);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, PutOverDataPlane(*engine_, *client_, ns_, blob));
  const uint64_t chunk = ns_.layout().BytesPerLayerPage();
  for (const uint32_t pages : {1u, 3u, 8u}) {
    SCOPED_TRACE(pages);
    ASSERT_OK_AND_ASSIGN(const core::ReadReply read, ReadPages(*engine_, ns_, key, 0, pages));
    const std::vector<wire::ByteRange> ranges = WireRanges(read.ranges[0]);
    ASSERT_EQ(ranges.size(), ns_.layout().num_layers);
    std::vector<std::vector<uint8_t>> buffers;
    const FetchOutcome got = FetchInto(read.lease_id, key, ranges, &buffers);
    ASSERT_OK(got.status);
    EXPECT_EQ(got.data_messages, ranges.size());
    EXPECT_EQ(got.data_after_done, 0u) << "FETCH_DONE must be the last message";
    size_t checksum = 0;
    for (size_t i = 0; i < ranges.size(); ++i) {
      ASSERT_TRUE(got.ranges[i].has_value()) << i;
      ASSERT_OK(*got.ranges[i]);
      ASSERT_EQ(buffers[i].size(), uint64_t{pages} * chunk);
      EXPECT_EQ(0, std::memcmp(buffers[i].data(), blob.bytes.data() + ranges[i].offset,
                               buffers[i].size()))
          << "layer " << i;
      // Each chunk verifies against the checksums the Read returned.
      for (uint64_t off = 0; off < buffers[i].size(); off += chunk) {
        const absl::Span<const std::byte> bytes(
            reinterpret_cast<const std::byte*>(buffers[i].data() + off), chunk);
        EXPECT_EQ(core::ChunkChecksum(bytes), read.ranges[0].checksums[checksum++]);
      }
    }
    ASSERT_OK(engine_->Release(read.lease_id));
  }
  EXPECT_EQ(server_->stats().fetch_failures, 0u);
  EXPECT_EQ(server_->stats().ranges_sent, 3u * ns_.layout().num_layers);
  ASSERT_OK(server_->WaitIdle(absl::Seconds(5)));
  EXPECT_EQ(server_->stats().fetch_latency.count, 3u);
}

TEST_P(DataPlaneServerTest, ManyConcurrentFetchesFromOneClientAllLand) {
  const BlobContent blob = MakeBlob(ns_, 16, 4);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, PutOverDataPlane(*engine_, *client_, ns_, blob));
  ASSERT_OK_AND_ASSIGN(const core::ReadReply read, ReadPages(*engine_, ns_, key, 0, 16));
  constexpr int kFetches = 24;
  std::vector<std::vector<wire::ByteRange>> ranges(kFetches);
  std::vector<std::vector<std::vector<uint8_t>>> buffers(kFetches);
  std::vector<std::shared_ptr<testing::FetchCall>> calls;
  for (int f = 0; f < kFetches; ++f) {
    // Page f % 16 of every layer, then the whole of layer f % 4: 5 ranges each.
    const uint64_t chunk = ns_.layout().BytesPerLayerPage();
    const uint64_t layer_bytes = 16 * chunk;
    for (uint32_t l = 0; l < 4; ++l) {
      ranges[f].push_back({.offset = l * layer_bytes + (f % 16) * chunk, .length = chunk});
    }
    ranges[f].push_back({.offset = (f % 4) * layer_bytes, .length = layer_bytes});
    buffers[f] = BuffersFor(ranges[f]);
    calls.push_back(client_->StartFetch(read.lease_id, key, ranges[f], Spans(buffers[f])));
  }
  for (int f = 0; f < kFetches; ++f) {
    ASSERT_TRUE(calls[f]->Wait()) << f;
    const FetchOutcome got = calls[f]->outcome();
    ASSERT_OK(got.status);
    EXPECT_EQ(got.data_after_done, 0u);
    for (size_t i = 0; i < ranges[f].size(); ++i) {
      EXPECT_EQ(0, std::memcmp(buffers[f][i].data(), blob.bytes.data() + ranges[f][i].offset,
                               buffers[f][i].size()))
          << f << "/" << i;
    }
  }
  EXPECT_EQ(server_->stats().ranges_sent, uint64_t{kFetches} * 5);
}

TEST_P(DataPlaneServerTest, ALongRangeListSentByRendezvousIsServed) {
  const BlobContent blob = MakeBlob(ns_, 4, 5);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, PutOverDataPlane(*engine_, *client_, ns_, blob));
  ASSERT_OK_AND_ASSIGN(const core::ReadReply read, ReadPages(*engine_, ns_, key, 0, 4));
  // kMaxFetchRanges ranges of 8 bytes each, strided over the blob: a 64 KiB range list.
  std::vector<wire::ByteRange> ranges;
  for (uint32_t i = 0; i < wire::kMaxFetchRanges; ++i) {
    ranges.push_back({.offset = (uint64_t{i} * 37) % (blob.bytes.size() - 8), .length = 8});
  }
  std::vector<std::vector<uint8_t>> buffers = BuffersFor(ranges);
  std::shared_ptr<testing::FetchCall> call = client_->StartFetch(
      read.lease_id, key, ranges, Spans(buffers), transport::DataProtocol::kRendezvous);
  ASSERT_TRUE(call->Wait());
  ASSERT_OK(call->outcome().status);
  for (size_t i = 0; i < ranges.size(); ++i) {
    ASSERT_EQ(0, std::memcmp(buffers[i].data(), blob.bytes.data() + ranges[i].offset, 8)) << i;
  }
}

TEST_P(DataPlaneServerTest, FetchUnderAnUnknownOrExpiredLeaseIsNotFound) {
  const BlobContent blob = MakeBlob(ns_, 2, 6);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, PutOverDataPlane(*engine_, *client_, ns_, blob));
  ASSERT_OK_AND_ASSIGN(const core::ReadReply read, ReadPages(*engine_, ns_, key, 0, 2));
  const std::vector<wire::ByteRange> ranges = WireRanges(read.ranges[0]);
  std::vector<std::vector<uint8_t>> buffers;

  FetchOutcome got = FetchInto(read.lease_id ^ 0x5555, key, ranges, &buffers);
  EXPECT_CODE(got.status, absl::StatusCode::kNotFound);
  EXPECT_EQ(got.data_messages, 0u);

  clock_.Advance(engine_->options().default_lease_ttl + absl::Seconds(1));
  got = FetchInto(read.lease_id, key, ranges, &buffers);
  EXPECT_CODE(got.status, absl::StatusCode::kNotFound);
  EXPECT_EQ(got.data_messages, 0u);
  EXPECT_EQ(server_->stats().fetch_failures, 2u);
}

TEST_P(DataPlaneServerTest, FetchOfABlobNotUnderTheLeaseIsPermissionDenied) {
  const BlobContent a = MakeBlob(ns_, 2, 7);
  const BlobContent b = MakeBlob(ns_, 2, 8);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key_a, PutOverDataPlane(*engine_, *client_, ns_, a));
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key_b, PutOverDataPlane(*engine_, *client_, ns_, b));
  ASSERT_OK_AND_ASSIGN(const core::ReadReply read, ReadPages(*engine_, ns_, key_a, 0, 2));
  std::vector<std::vector<uint8_t>> buffers;
  const FetchOutcome got = FetchInto(read.lease_id, key_b, WireRanges(read.ranges[0]), &buffers);
  EXPECT_CODE(got.status, absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(got.data_messages, 0u);
}

TEST_P(DataPlaneServerTest, ARangePastTheBlobIsOutOfRangeAndNothingAfterItIsSent) {
  const BlobContent blob = MakeBlob(ns_, 2, 9);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, PutOverDataPlane(*engine_, *client_, ns_, blob));
  ASSERT_OK_AND_ASSIGN(const core::ReadReply read, ReadPages(*engine_, ns_, key, 0, 2));
  const uint64_t size = blob.bytes.size();
  const std::vector<wire::ByteRange> ranges = {{.offset = 0, .length = 64},
                                               {.offset = size - 10, .length = 20},
                                               {.offset = 64, .length = 64}};
  std::vector<std::vector<uint8_t>> buffers;
  const FetchOutcome got = FetchInto(read.lease_id, key, ranges, &buffers);
  EXPECT_CODE(got.status, absl::StatusCode::kOutOfRange);
  EXPECT_NE(got.status.message().find("range 1"), absl::string_view::npos) << got.status;
  ASSERT_TRUE(got.ranges[0].has_value());
  EXPECT_OK(*got.ranges[0]);
  EXPECT_EQ(0, std::memcmp(buffers[0].data(), blob.bytes.data(), 64));
  EXPECT_FALSE(got.ranges[1].has_value());
  EXPECT_FALSE(got.ranges[2].has_value()) << "no range starts after the first error";
  EXPECT_EQ(got.data_after_done, 0u);
}

TEST_P(DataPlaneServerTest, MalformedRequestsAreInvalidArgumentAndTheServerKeepsServing) {
  const BlobContent blob = MakeBlob(ns_, 2, 10);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, PutOverDataPlane(*engine_, *client_, ns_, blob));
  ASSERT_OK_AND_ASSIGN(const core::ReadReply read, ReadPages(*engine_, ns_, key, 0, 2));
  const wire::FetchHeader fetch{.request_id = 77,
                                .lease_id = read.lease_id,
                                .key = {.hi = key.hash.hi, .lo = key.hash.lo},
                                .range_count = 1};
  const std::vector<wire::ByteRange> one = {{.offset = 0, .length = 16}};
  const std::vector<uint8_t> one_range = wire::EncodeFetchRanges(one);

  // Wrong magic: the request id is still read from bytes 8..15.
  auto bad_magic = wire::EncodeFetchHeader(fetch);
  bad_magic[0] = 0x00;
  EXPECT_CODE(client_->SendRaw(wire::MessageType::kFetch, bad_magic, one_range,
                               wire::MessageType::kFetchDone, 77),
              absl::StatusCode::kInvalidArgument);
  // Unknown version.
  auto bad_version = wire::EncodeFetchHeader(fetch);
  bad_version[1] = 9;
  EXPECT_CODE(client_->SendRaw(wire::MessageType::kFetch, bad_version, one_range,
                               wire::MessageType::kFetchDone, 77),
              absl::StatusCode::kInvalidArgument);
  // Too short to carry a request id: answered with request id 0.
  const std::vector<uint8_t> stub = {wire::kWireMagic, wire::kWireVersion, 1, 0};
  EXPECT_CODE(
      client_->SendRaw(wire::MessageType::kFetch, stub, {}, wire::MessageType::kFetchDone, 0),
      absl::StatusCode::kInvalidArgument);
  // A range list that does not match the count, and an empty range.
  const auto header = wire::EncodeFetchHeader(fetch);
  EXPECT_CODE(
      client_->SendRaw(wire::MessageType::kFetch, header, {}, wire::MessageType::kFetchDone, 77),
      absl::StatusCode::kInvalidArgument);
  const std::vector<wire::ByteRange> empty = {{.offset = 0, .length = 0}};
  EXPECT_CODE(client_->SendRaw(wire::MessageType::kFetch, header, wire::EncodeFetchRanges(empty),
                               wire::MessageType::kFetchDone, 77),
              absl::StatusCode::kInvalidArgument);
  // PUT_DATA with an unknown flag.
  auto bad_put = wire::EncodePutDataHeader({.request_id = 78, .put_id = 1, .offset = 0});
  bad_put[4] = 2;  // an unknown flag
  EXPECT_CODE(client_->SendRaw(wire::MessageType::kPutData, bad_put, one_range,
                               wire::MessageType::kPutDone, 78),
              absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(server_->stats().malformed, 6u);

  // Still serving, this client and a new one.
  std::vector<std::vector<uint8_t>> buffers;
  EXPECT_OK(FetchInto(read.lease_id, key, one, &buffers).status);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TestClient> other,
                       TestClient::Connect(server_->address(), ClientOptions()));
  std::vector<uint8_t> dest(16);
  EXPECT_OK(other->Fetch(read.lease_id, key, one, {absl::MakeSpan(dest)}).status);
  EXPECT_EQ(0, std::memcmp(dest.data(), blob.bytes.data(), 16));
}

TEST_P(DataPlaneServerTest, PutDataErrorsAreAnsweredAndThePutStillCompletes) {
  const BlobContent blob = MakeBlob(ns_, 2, 11);
  ASSERT_OK_AND_ASSIGN(const core::BeginPutReply begin,
                       engine_->BeginPut(ns_, testing::PutRequestFor(blob)));
  const absl::Span<const uint8_t> bytes = blob.bytes;
  EXPECT_CODE(client_->Put(begin.put_id + 1, 0, bytes), absl::StatusCode::kNotFound);
  EXPECT_CODE(client_->Put(begin.put_id, 1, bytes), absl::StatusCode::kOutOfRange);
  EXPECT_CODE(client_->Put(begin.put_id, bytes.size() + 1, bytes.subspan(0, 1)),
              absl::StatusCode::kOutOfRange);
  EXPECT_CODE(engine_->CommitPut(begin.put_id).status(), absl::StatusCode::kFailedPrecondition)
      << "no bytes were recorded";
  ASSERT_OK(client_->Put(begin.put_id, 0, bytes));
  ASSERT_OK(engine_->CommitPut(begin.put_id).status());
  // A committed put is gone: more data for it is NOT_FOUND.
  EXPECT_CODE(client_->Put(begin.put_id, 0, bytes.subspan(0, 8)), absl::StatusCode::kNotFound);
  const DataPlaneStats stats = server_->stats();
  EXPECT_EQ(stats.put_requests, 5u);
  EXPECT_EQ(stats.put_failures, 4u);
  EXPECT_EQ(stats.bytes_in, bytes.size());
}

// Issue 12, item 12: a connection's unfinished PUTs and the PUT metadata arriving at once are
// bounded; past each bound a PUT is RESOURCE_EXHAUSTED naming it, and what is under it
// completes.
TEST_P(DataPlaneServerTest, PutLimitsRefuseAtTheirBound) {
  const BlobContent first = MakeBlob(ns_, 2, 31);
  const BlobContent second = MakeBlob(ns_, 2, 32);
  auto [header, payload] = PutMessage(ns_, first);
  auto [second_header, second_payload] = PutMessage(ns_, second);
  DataPlaneOptions options = ServerOptions();
  options.max_puts_per_peer = 1;
  options.max_put_metadata_bytes = payload.size();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DataPlaneServer> server,
                       DataPlaneServer::Start(engine_.get(), options));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TestClient> client,
                       TestClient::Connect(server->address(), ClientOptions()));
  // PUT 1 begins and waits for its bytes.
  header.request_id = 1;
  client->messenger().Send(client->peer(), static_cast<uint16_t>(wire::MessageType::kPut),
                           wire::EncodePutHeader(header), payload, {}, [](absl::Status) {});
  for (int i = 0; i < 1000 && engine_->Tiers().engine.pending_puts == 0; ++i) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_EQ(engine_->Tiers().engine.pending_puts, 1u);
  second_header.request_id = 2;
  const absl::Status refused =
      client->SendPut(wire::EncodePutHeader(second_header), second_payload, 2, {{0, second.bytes}});
  EXPECT_CODE(refused, absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.message().find("max_puts_per_peer"), absl::string_view::npos) << refused;
  // PUT 1's bytes: it commits.
  const auto piece = wire::EncodePutDataHeader({.put_id = 1, .offset = 0, .of_put = true});
  client->messenger().Send(client->peer(), static_cast<uint16_t>(wire::MessageType::kPutData),
                           piece, first.bytes, {.protocol = transport::DataProtocol::kRendezvous},
                           [](absl::Status) {});
  for (int i = 0; i < 1000 && engine_->Tiers().engine.blobs == 0; ++i) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(engine_->Tiers().engine.blobs, 1u);
  // Metadata one byte past the bound (a longer namespace).
  const radix::Namespace longer = testing::TestNamespace("a-longer-tenant");
  auto [long_header, long_payload] = PutMessage(longer, MakeBlob(longer, 2, 33));
  ASSERT_GT(long_payload.size(), payload.size());
  long_header.request_id = 3;
  const absl::Status too_much =
      client->SendPut(wire::EncodePutHeader(long_header), long_payload, 3, {});
  EXPECT_CODE(too_much, absl::StatusCode::kResourceExhausted);
  EXPECT_NE(too_much.message().find("max_put_metadata_bytes"), absl::string_view::npos) << too_much;
  EXPECT_EQ(engine_->Tiers().engine.pending_puts, 0u);
}

// A put in one round trip (PUT + its PUT_DATA pieces): committed whole, an existing key is
// OK without a second blob, and every malformed or dishonest PUT gets its precise status,
// leaves no pending put and the server serving.
TEST_P(DataPlaneServerTest, PutInOneRoundTripRefusesWhatIsWrongAndCommitsWhatIsRight) {
  const BlobContent blob = MakeBlob(ns_, 2, 12);
  const core::PutRequest request = testing::PutRequestFor(blob);
  const std::string ns = ns_.CanonicalEncoding();
  const auto ns_bytes = absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(ns.data()), ns.size());
  auto put = [&](uint64_t request_id, wire::PutHeader header, std::vector<uint8_t> payload,
                 std::vector<std::pair<uint64_t, absl::Span<const uint8_t>>> pieces) {
    header.request_id = request_id;
    return client_->SendPut(wire::EncodePutHeader(header), payload, request_id, pieces);
  };
  const auto [header, payload] = PutMessage(ns_, blob);
  const absl::Span<const uint8_t> bytes = blob.bytes;
  const std::vector<std::pair<uint64_t, absl::Span<const uint8_t>>> whole = {
      {0, bytes.first(bytes.size() / 2)}, {bytes.size() / 2, bytes.subspan(bytes.size() / 2)}};

  // An unknown flag; a payload shorter than announced; a namespace that does not decode; a
  // checksum count the layout does not have.
  auto flagged = wire::EncodePutHeader(header);
  flagged[36] = 4;
  EXPECT_CODE(client_->SendPut(flagged, payload, 0, {}), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(put(1, header, std::vector<uint8_t>(payload.begin(), payload.end() - 1), whole),
              absl::StatusCode::kInvalidArgument);
  std::vector<uint8_t> garbled = payload;
  std::fill_n(garbled.begin(), ns.size(), uint8_t{0xFF});
  EXPECT_CODE(put(2, header, garbled, whole), absl::StatusCode::kInvalidArgument);
  wire::PutHeader short_sums = header;
  short_sums.checksum_count -= 1;
  EXPECT_CODE(put(3, short_sums,
                  wire::EncodePutPayload(
                      short_sums, ns_bytes, {}, {}, request.tokens,
                      absl::MakeConstSpan(request.checksums).first(request.checksums.size() - 1)),
                  whole),
              absl::StatusCode::kInvalidArgument);
  // A piece past the blob's end; corrupted bytes (the commit verifies: DATA_LOSS).
  EXPECT_CODE(put(4, header, payload, {{bytes.size(), bytes.first(1)}}),
              absl::StatusCode::kOutOfRange);
  std::vector<uint8_t> corrupt(bytes.begin(), bytes.end());
  corrupt[corrupt.size() / 3] ^= 0x01;
  EXPECT_CODE(put(5, header, payload, {{0, corrupt}}), absl::StatusCode::kDataLoss);
  EXPECT_EQ(engine_->Tiers().engine.pending_puts, 0u);
  EXPECT_EQ(engine_->Tiers().engine.blobs, 0u);

  // The honest PUT, in two pieces; then again: the key exists, nothing is added.
  ASSERT_OK(put(6, header, payload, whole));
  EXPECT_EQ(engine_->Tiers().engine.blobs, 1u);
  ASSERT_OK(put(7, header, payload, whole));
  EXPECT_EQ(engine_->Tiers().engine.blobs, 1u);
  EXPECT_EQ(engine_->Tiers().engine.pending_puts, 0u);
  ASSERT_OK_AND_ASSIGN(const core::BeginPutReply existing, engine_->BeginPut(ns_, request));
  ASSERT_TRUE(existing.exists);
  // A piece of a PUT that does not exist is dropped (the sender sees ABORTED); the server
  // keeps serving and the blob reads back byte-exact.
  absl::Notification dropped;
  absl::Status piece_status;
  const auto stray = wire::EncodePutDataHeader({.put_id = 999, .of_put = true});
  client_->messenger().Send(client_->peer(), static_cast<uint16_t>(wire::MessageType::kPutData),
                            stray, bytes, {.protocol = transport::DataProtocol::kRendezvous},
                            [&](absl::Status status) {
                              piece_status = status;
                              dropped.Notify();
                            });
  ASSERT_TRUE(dropped.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_CODE(piece_status, absl::StatusCode::kAborted);
  ASSERT_OK_AND_ASSIGN(const core::ReadReply read, ReadPages(*engine_, ns_, existing.key, 0, 2));
  std::vector<std::vector<uint8_t>> buffers;
  const std::vector<wire::ByteRange> all = {{.offset = 0, .length = bytes.size()}};
  EXPECT_OK(FetchInto(read.lease_id, existing.key, all, &buffers).status);
  ASSERT_EQ(buffers.size(), 1u);
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), buffers[0].begin()));
  const DataPlaneStats stats = server_->stats();
  EXPECT_EQ(stats.put_requests, 8u);
  EXPECT_EQ(stats.put_failures, 6u);
}

INSTANTIATE_TEST_SUITE_P(Transports, DataPlaneServerTest, ::testing::Values("tcp", ""),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param.empty() ? std::string("Default") : info.param;
                         });

}  // namespace
}  // namespace strata::store::dataplane
