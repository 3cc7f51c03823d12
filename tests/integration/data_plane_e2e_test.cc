// End to end through a real strata-node process: put and fetch a blob over real gRPC (the
// control plane) and real UCX (the data plane, store/dataplane), and a SIGTERM drain that
// waits for a fetch in flight before the node stops. The data-plane client is the bare
// wire-protocol client of store/dataplane's tests (test_client.h).
#include <csignal>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

#include "store/dataplane/test_blobs.h"
#include "store/dataplane/test_client.h"
#include "strata/base/status_test_macros.h"
#include "strata/proto/repeated_convert.h"
#include "strata/proto/status_convert.h"
#include "strata/store/core/chunk_checksum.h"
#include "strata/testing/node_process.h"
#include "strata/testing/wire_requests.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::data_plane_e2e_test {

using strata::testing::BeginPutFor;
using strata::testing::Call;
using strata::testing::ContextWithDeadline;
using strata::testing::FromWire;
using strata::testing::NodeProcess;
using strata::testing::ToWire;

namespace {

namespace wire = store::transport::wire;
using store::dataplane::testing::BlobContent;
using store::dataplane::testing::FetchCall;
using store::dataplane::testing::FetchOutcome;
using store::dataplane::testing::TestClient;

class DataPlaneEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(
        node_,
        NodeProcess::Start({.args = {"--dataplane_listen=127.0.0.1:0", "--drain_timeout=20s"}}));
    // A listening data plane ("strata-node: dataplane listening on HOST:PORT"), its port printed.
    ASSERT_TRUE(absl::StrContains(node_->StdoutText(), "strata-node: dataplane listening on "))
        << node_->StdoutText();
    address_ = node_->data_plane_address();
    ASSERT_TRUE(absl::StartsWith(address_, "127.0.0.1:")) << node_->StdoutText();
    ASSERT_NE(address_, "127.0.0.1:0");
    store_ = node_->StoreStub();
  }

  // BeginPut over gRPC, the bytes over UCX, CommitPut over gRPC.
  absl::StatusOr<radix::BlobKey> Put(TestClient& client, const BlobContent& blob) {
    v1::BeginPutRequest begin = BeginPutFor(ns_, blob.tokens, blob.checksums);
    v1::BeginPutResponse began;
    absl::Status status = Call(store_->BeginPut(ContextWithDeadline().get(), begin, &began));
    if (!status.ok()) return status;
    EXPECT_FALSE(began.exists());
    EXPECT_EQ(began.data_plane().ucx_address(), address_);
    const size_t half = blob.bytes.size() / 2;
    const absl::Span<const uint8_t> bytes = blob.bytes;
    status = client.Put(began.put_id(), half, bytes.subspan(half));
    if (!status.ok()) return status;
    status = client.Put(began.put_id(), 0, bytes.subspan(0, half));
    if (!status.ok()) return status;
    v1::CommitPutRequest commit;
    commit.set_put_id(began.put_id());
    v1::CommitPutResponse committed;
    status = Call(store_->CommitPut(ContextWithDeadline().get(), commit, &committed));
    if (!status.ok()) return status;
    return FromWire(committed.key());
  }

  // A Read over gRPC of pages [0, pages) of every layer of `key`.
  absl::StatusOr<v1::ReadResponse> Read(const radix::BlobKey& key, uint32_t pages) {
    v1::ReadRequest request;
    *request.mutable_ns() = ToWire(ns_);
    v1::ReadRange* range = request.add_ranges();
    *range->mutable_blob() = ToWire(key);
    range->set_first_page(0);
    range->set_num_pages(pages);
    range->set_layer_begin(0);
    range->set_layer_end(ns_.layout().num_layers);
    v1::ReadResponse response;
    absl::Status status = Call(store_->Read(ContextWithDeadline().get(), request, &response));
    if (!status.ok()) return status;
    return response;
  }

  absl::Status Release(uint64_t lease_id) {
    v1::ReleaseRequest request;
    request.set_lease_id(lease_id);
    v1::ReleaseResponse response;
    return Call(store_->Release(ContextWithDeadline().get(), request, &response));
  }

  static std::vector<wire::ByteRange> Ranges(const v1::ReadGrant& grant) {
    std::vector<wire::ByteRange> ranges;
    for (const v1::ByteRange& r : grant.layer_ranges()) {
      ranges.push_back({.offset = r.offset(), .length = r.length()});
    }
    return ranges;
  }

  // 4 layers x 2 KV heads x 64 dims, fp16, 16-token pages: 8 KiB chunks.
  const radix::Namespace ns_ = store::dataplane::testing::TestNamespace("e2e");
  std::unique_ptr<NodeProcess> node_;
  std::string address_;
  std::unique_ptr<v1::Store::Stub> store_;
};

TEST_F(DataPlaneEndToEndTest, PutThenFetchAPrefixOfEveryLayerThroughGrpcAndUcx) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TestClient> client, TestClient::Connect(address_));
  const BlobContent blob = store::dataplane::testing::MakeBlob(ns_, 8, 42);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, Put(*client, blob));

  v1::MatchRequest match;
  *match.mutable_ns() = ToWire(ns_);
  proto::TokensToProto(blob.tokens, match.mutable_tokens());
  v1::MatchResponse matched;
  ASSERT_OK(Call(store_->Match(ContextWithDeadline().get(), match, &matched)));
  EXPECT_EQ(matched.matched_pages(), 8u);

  ASSERT_OK_AND_ASSIGN(const v1::ReadResponse read, Read(key, 5));
  EXPECT_EQ(read.data_plane().ucx_address(), address_);
  ASSERT_EQ(read.grants_size(), 1);
  const v1::ReadGrant& grant = read.grants(0);
  const std::vector<wire::ByteRange> ranges = Ranges(grant);
  ASSERT_EQ(ranges.size(), ns_.layout().num_layers);
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<absl::Span<uint8_t>> dests;
  for (const wire::ByteRange& r : ranges) buffers.emplace_back(r.length);
  for (auto& b : buffers) dests.push_back(absl::MakeSpan(b));
  const FetchOutcome got = client->Fetch(read.lease_id(), key, ranges, dests);
  ASSERT_OK(got.status);
  int checksum = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    ASSERT_EQ(
        0, std::memcmp(buffers[i].data(), blob.bytes.data() + ranges[i].offset, buffers[i].size()))
        << "layer " << i;
    for (uint64_t off = 0; off < buffers[i].size(); off += grant.chunk_bytes()) {
      const absl::Span<const std::byte> chunk(
          reinterpret_cast<const std::byte*>(buffers[i].data() + off), grant.chunk_bytes());
      EXPECT_EQ(store::core::ChunkChecksum(chunk), grant.chunk_checksums(checksum++));
    }
  }
  EXPECT_EQ(checksum, grant.chunk_checksums_size());
  ASSERT_OK(Release(read.lease_id()));

  // A released lease no longer reads.
  EXPECT_CODE(client->Fetch(read.lease_id(), key, ranges, dests).status,
              absl::StatusCode::kNotFound);
  client.reset();
  node_->Signal(SIGTERM);
  ASSERT_OK_AND_ASSIGN(const int code, node_->WaitExit(absl::Seconds(20)));
  EXPECT_EQ(code, 0);
  EXPECT_TRUE(absl::StrContains(node_->StdoutText(), "strata-node: stopped"));
}

TEST_F(DataPlaneEndToEndTest, SigtermDrainWaitsForAFetchInFlightThenStops) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TestClient> writer, TestClient::Connect(address_));
  const BlobContent blob = store::dataplane::testing::MakeBlob(ns_, 8, 43);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, Put(*writer, blob));
  ASSERT_OK_AND_ASSIGN(const v1::ReadResponse read, Read(key, 8));
  const std::vector<wire::ByteRange> ranges = Ranges(read.grants(0));

  // A slow reader: its FETCH_DATA payloads wait, undecided, until it takes them.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TestClient> reader,
                       TestClient::Connect(address_, {.hold_data = true}));
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<absl::Span<uint8_t>> dests;
  for (const wire::ByteRange& r : ranges) buffers.emplace_back(r.length);
  for (auto& b : buffers) dests.push_back(absl::MakeSpan(b));
  std::shared_ptr<FetchCall> call = reader->StartFetch(read.lease_id(), key, ranges, dests);
  ASSERT_TRUE(call->WaitForData(ranges.size()));

  node_->Signal(SIGTERM);
  EXPECT_CODE(node_->WaitExit(absl::Milliseconds(500)).status(),
              absl::StatusCode::kDeadlineExceeded)
      << "the node must wait for the lease and the transfer in flight";
  // Draining refuses puts but keeps serving the fetch and the Release.
  call->AcceptHeld();
  ASSERT_TRUE(call->Wait());
  ASSERT_OK(call->outcome().status);
  for (size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_EQ(
        0, std::memcmp(buffers[i].data(), blob.bytes.data() + ranges[i].offset, buffers[i].size()));
  }
  ASSERT_OK(Release(read.lease_id()));
  ASSERT_OK_AND_ASSIGN(const int code, node_->WaitExit(absl::Seconds(15)));
  EXPECT_EQ(code, 0);
  EXPECT_FALSE(absl::StrContains(node_->StderrText(), "still in flight")) << node_->StderrText();
  EXPECT_TRUE(absl::StrContains(node_->StdoutText(), "strata-node: stopped"));
}

}  // namespace
}  // namespace strata::integration::data_plane_e2e_test
