// DataPlaneServer's READ over real UCX on loopback (TCP): every refusal is a precise status in
// FETCH_DONE with no lease left behind, a served READ releases its lease when its transfers
// end, and the server keeps serving. (Byte-exact READs, merged and layer by layer, are
// exercised end to end by the client tests in tests/integration.)
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "store/dataplane/test_blobs.h"
#include "store/dataplane/test_client.h"
#include "strata/base/status_test_macros.h"
#include "strata/store/dataplane/data_plane_server.h"

namespace strata::store::dataplane {
namespace {

namespace wire = transport::wire;
using testing::BlobContent;
using testing::MakeBlob;
using testing::PutOverDataPlane;
using testing::TestClient;

class DataPlaneReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(
        engine_, core::NodeEngine::Create(testing::EngineOptions(&clock_, uint64_t{64} << 20)));
    ASSERT_OK_AND_ASSIGN(
        server_, DataPlaneServer::Start(engine_.get(),
                                        {.listen_address = "127.0.0.1:0", .transports = "tcp"}));
    ASSERT_OK_AND_ASSIGN(client_, TestClient::Connect(server_->address(), {.transports = "tcp"}));
    blob_ = MakeBlob(ns_, 4, 21);
    ASSERT_OK_AND_ASSIGN(key_, PutOverDataPlane(*engine_, *client_, ns_, blob_));
  }

  // Sends READ (request id 90) of `ranges` in namespace encoding `ns`, landing item i in
  // items_[i] (merge: everything in items_[0]), and returns the FETCH_DONE status.
  absl::Status Read(const std::string& ns, const std::vector<wire::ReadRangeBits>& ranges,
                    bool merge = false) {
    const uint64_t chunk = ns_.layout().BytesPerLayerPage();
    items_.clear();
    std::vector<absl::Span<uint8_t>> dests;
    for (const wire::ReadRangeBits& r : ranges) {
      for (uint32_t l = r.layer_begin; l < r.layer_end && !merge; ++l) {
        items_.emplace_back(uint64_t{r.num_pages} * chunk, 0xEE);
      }
    }
    if (merge) items_.emplace_back(blob_.bytes.size(), 0xEE);
    for (auto& item : items_) dests.push_back(absl::MakeSpan(item));
    client_->ExpectData(90, std::move(dests));
    const wire::ReadHeader header{.request_id = 90,
                                  .range_count = static_cast<uint32_t>(ranges.size()),
                                  .lease_ttl_ms = 0,
                                  .ns_bytes = static_cast<uint32_t>(ns.size()),
                                  .merge = merge};
    const std::vector<uint8_t> payload = wire::EncodeReadPayload(
        absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(ns.data()), ns.size()), ranges);
    return client_->SendRaw(wire::MessageType::kRead, wire::EncodeReadHeader(header), payload,
                            wire::MessageType::kFetchDone, 90);
  }
  wire::ReadRangeBits Range(uint32_t first_page, uint32_t num_pages, uint32_t layer_begin,
                            uint32_t layer_end) const {
    return {.key = {key_.hash.hi, key_.hash.lo},
            .first_page = first_page,
            .num_pages = num_pages,
            .layer_begin = layer_begin,
            .layer_end = layer_end};
  }

  core::FakeClock clock_;
  std::unique_ptr<core::NodeEngine> engine_;
  std::unique_ptr<DataPlaneServer> server_;
  std::unique_ptr<TestClient> client_;
  const radix::Namespace ns_ = testing::TestNamespace();
  BlobContent blob_;
  radix::BlobKey key_;
  std::vector<std::vector<uint8_t>> items_;
};

TEST_F(DataPlaneReadTest, AServedReadReleasesItsLeaseWhenItsTransfersEnd) {
  const std::string ns = ns_.CanonicalEncoding();
  EXPECT_OK(Read(ns, {Range(0, 4, 0, 4)}));
  std::vector<uint8_t> all;
  for (const auto& item : items_) all.insert(all.end(), item.begin(), item.end());
  EXPECT_TRUE(all == blob_.bytes);
  EXPECT_OK(Read(ns, {Range(0, 4, 0, 4)}, /*merge=*/true));
  ASSERT_EQ(items_.size(), 1u);
  EXPECT_TRUE(items_[0] == blob_.bytes);
  EXPECT_OK(Read(ns, {Range(1, 2, 1, 3), Range(0, 1, 0, 4)}));
  const uint64_t chunk = ns_.layout().BytesPerLayerPage();
  ASSERT_EQ(items_.size(), 6u);
  // Item 0 = layer 1 pages 1..2 of a 4-page layer-major blob.
  EXPECT_EQ(0, std::memcmp(items_[0].data(), blob_.bytes.data() + (1 * 4 + 1) * chunk, 2 * chunk));
  EXPECT_EQ(engine_->Tiers().engine.leases, 0u);
  const DataPlaneStats stats = server_->stats();
  EXPECT_EQ(stats.read_requests, 3u);
  EXPECT_EQ(stats.read_failures, 0u);
  // 4 layers, 4 layers merged into one message, 2 + 4 layers.
  EXPECT_EQ(stats.ranges_sent, 4u + 1u + 6u);
  EXPECT_EQ(stats.bytes_out, blob_.bytes.size() * 2 + blob_.bytes.size() / 4 * 2);
  ASSERT_OK(server_->WaitIdle(absl::Seconds(5)));
  EXPECT_EQ(server_->stats().read_latency.count, 3u);
  EXPECT_EQ(server_->stats().fetch_latency.count, 0u);
}

TEST_F(DataPlaneReadTest, RefusalsArePreciseAndLeaveNoLease) {
  const std::string ns = ns_.CanonicalEncoding();
  // The engine's Read statuses, as the control plane's Read answers them.
  wire::ReadRangeBits unknown = Range(0, 1, 0, 1);
  unknown.key.lo ^= 1;
  EXPECT_CODE(Read(ns, {unknown}), absl::StatusCode::kNotFound);
  EXPECT_CODE(Read(ns, {Range(3, 2, 0, 4)}), absl::StatusCode::kOutOfRange);
  EXPECT_CODE(Read(ns, {Range(0, 1, 0, 5)}), absl::StatusCode::kOutOfRange);
  EXPECT_CODE(Read(ns, {Range(0, 0, 0, 4)}), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(Read(ns, {Range(0, 1, 2, 2)}), absl::StatusCode::kInvalidArgument);
  // Same tenant and model, another layout: the blob exists but not in this shape.
  const std::string other_layout = testing::TestNamespace("acme", 8).CanonicalEncoding();
  EXPECT_CODE(Read(other_layout, {Range(0, 1, 0, 1)}), absl::StatusCode::kFailedPrecondition);
  // Another tenant never sees it.
  EXPECT_CODE(Read(testing::TestNamespace("other").CanonicalEncoding(), {Range(0, 1, 0, 1)}),
              absl::StatusCode::kNotFound);
  // A namespace encoding that does not decode.
  std::string damaged = ns;
  damaged[0] = 'x';
  EXPECT_CODE(Read(damaged, {Range(0, 1, 0, 1)}), absl::StatusCode::kInvalidArgument);
  // More chunks than one READ may cover: refused before anything is leased.
  const wire::ReadRangeBits huge{.key = {key_.hash.hi, key_.hash.lo},
                                 .first_page = 0,
                                 .num_pages = 1u << 20,
                                 .layer_begin = 0,
                                 .layer_end = 2};
  const wire::ReadHeader huge_header{
      .request_id = 91, .range_count = 1, .ns_bytes = static_cast<uint32_t>(ns.size())};
  const std::vector<wire::ReadRangeBits> huge_ranges = {huge};
  EXPECT_CODE(client_->SendRaw(
                  wire::MessageType::kRead, wire::EncodeReadHeader(huge_header),
                  wire::EncodeReadPayload(
                      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(ns.data()), ns.size()),
                      huge_ranges),
                  wire::MessageType::kFetchDone, 91),
              absl::StatusCode::kInvalidArgument);
  // Malformed headers and payloads.
  const wire::ReadHeader header{.request_id = 90, .range_count = 1, .ns_bytes = 50};
  EXPECT_CODE(client_->SendRaw(wire::MessageType::kRead, wire::EncodeReadHeader(header), {},
                               wire::MessageType::kFetchDone, 90),
              absl::StatusCode::kInvalidArgument);
  auto zero_ns = wire::EncodeReadHeader(header);
  zero_ns[20] = 0;  // ns_bytes 0
  EXPECT_CODE(
      client_->SendRaw(wire::MessageType::kRead, zero_ns, {}, wire::MessageType::kFetchDone, 90),
      absl::StatusCode::kInvalidArgument);
  const std::vector<uint8_t> long_payload(70000, 0);  // by rendezvous, wrong size
  EXPECT_CODE(client_->SendRaw(wire::MessageType::kRead, wire::EncodeReadHeader(header),
                               long_payload, wire::MessageType::kFetchDone, 90),
              absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(engine_->Tiers().engine.leases, 0u);
  EXPECT_EQ(server_->stats().read_failures, 12u);
  // Still serving.
  EXPECT_OK(Read(ns, {Range(0, 4, 0, 4)}, /*merge=*/true));
  EXPECT_EQ(engine_->Tiers().engine.leases, 0u);
}

}  // namespace
}  // namespace strata::store::dataplane
