// End to end through a real strata-node process: put and fetch a blob over real gRPC (the
// control plane) and real UCX (the data plane, store/dataplane), and a SIGTERM drain that
// waits for a fetch in flight before the node stops. The data-plane client is the bare
// wire-protocol client of store/dataplane's tests (test_client.h).
#include <algorithm>
#include <csignal>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

#include "store/dataplane/test_blobs.h"
#include "store/dataplane/test_client.h"
#include "strata/base/status_test_macros.h"
#include "strata/proto/repeated_convert.h"
#include "strata/proto/status_convert.h"
#include "strata/store/core/chunk_checksum.h"
#include "strata/testing/net.h"
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

// One buffer per range, and the spans a fetch lands in.
struct RangeBuffers {
  explicit RangeBuffers(const std::vector<wire::ByteRange>& ranges) {
    for (const wire::ByteRange& r : ranges) buffers.emplace_back(r.length);
    for (auto& b : buffers) dests.push_back(absl::MakeSpan(b));
  }
  // Each buffer holds its range of `bytes`.
  bool Hold(const std::vector<uint8_t>& bytes, const std::vector<wire::ByteRange>& ranges) const {
    for (size_t i = 0; i < ranges.size(); ++i) {
      if (std::memcmp(buffers[i].data(), bytes.data() + ranges[i].offset, buffers[i].size()) != 0) {
        return false;
      }
    }
    return true;
  }
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<absl::Span<uint8_t>> dests;
};

uint16_t PortOf(const std::string& address) {
  uint32_t port = 0;
  EXPECT_TRUE(absl::SimpleAtoi(address.substr(address.rfind(':') + 1), &port)) << address;
  return static_cast<uint16_t>(port);
}

class DataPlaneEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::string> args = {"--dataplane_listen=127.0.0.1:0", "--drain_timeout=20s",
                                     "--http_listen=127.0.0.1:0"};
    args.insert(args.end(), ExtraArgs().begin(), ExtraArgs().end());
    ASSERT_OK_AND_ASSIGN(node_, NodeProcess::Start({.args = args}));
    // A listening data plane ("strata-node: dataplane listening on HOST:PORT"), its port printed.
    ASSERT_TRUE(absl::StrContains(node_->StdoutText(), "strata-node: dataplane listening on "))
        << node_->StdoutText();
    address_ = node_->data_plane_address();
    ASSERT_TRUE(absl::StartsWith(address_, "127.0.0.1:")) << node_->StdoutText();
    ASSERT_NE(address_, "127.0.0.1:0");
    store_ = node_->StoreStub();
  }

  virtual const std::vector<std::string>& ExtraArgs() const {
    static const std::vector<std::string> none;
    return none;
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
  RangeBuffers buffers(ranges);
  const FetchOutcome got = client->Fetch(read.lease_id(), key, ranges, buffers.dests);
  ASSERT_OK(got.status);
  ASSERT_TRUE(buffers.Hold(blob.bytes, ranges));
  int checksum = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    for (uint64_t off = 0; off < buffers.buffers[i].size(); off += grant.chunk_bytes()) {
      const absl::Span<const std::byte> chunk(
          reinterpret_cast<const std::byte*>(buffers.buffers[i].data() + off), grant.chunk_bytes());
      EXPECT_EQ(store::core::ChunkChecksum(chunk), grant.chunk_checksums(checksum++));
    }
  }
  EXPECT_EQ(checksum, grant.chunk_checksums_size());
  ASSERT_OK(Release(read.lease_id()));

  // A released lease no longer reads.
  EXPECT_CODE(client->Fetch(read.lease_id(), key, ranges, buffers.dests).status,
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
  RangeBuffers buffers(ranges);
  std::shared_ptr<FetchCall> call = reader->StartFetch(read.lease_id(), key, ranges, buffers.dests);
  ASSERT_TRUE(call->WaitForData(ranges.size()));

  node_->Signal(SIGTERM);
  EXPECT_CODE(node_->WaitExit(absl::Milliseconds(500)).status(),
              absl::StatusCode::kDeadlineExceeded)
      << "the node must wait for the lease and the transfer in flight";
  // Draining refuses puts but keeps serving the fetch and the Release.
  call->AcceptHeld();
  ASSERT_TRUE(call->Wait());
  ASSERT_OK(call->outcome().status);
  EXPECT_TRUE(buffers.Hold(blob.bytes, ranges));
  ASSERT_OK(Release(read.lease_id()));
  ASSERT_OK_AND_ASSIGN(const int code, node_->WaitExit(absl::Seconds(15)));
  EXPECT_EQ(code, 0);
  EXPECT_FALSE(absl::StrContains(node_->StderrText(), "still in flight")) << node_->StderrText();
  EXPECT_TRUE(absl::StrContains(node_->StdoutText(), "strata-node: stopped"));
}

// Every port the node listens on — and it listens on exactly its gRPC, data-plane and HTTP
// addresses (no port of UCX's) — gets the hostile streams (the 17 bytes that aborted UCX
// 1.13's TCP connection manager, 64 KiB of 0x00 / 0xFF, UCX's TCP magic with an absurd
// length, frames with impossible sizes or before the handshake, random bytes), and a
// client's first bytes replayed four times in one write. The node keeps serving: a put and a
// fetch afterwards are byte-exact.
TEST_F(DataPlaneEndToEndTest, HostileByteStreamsOnEveryPortLeaveTheNodeServing) {
  ASSERT_OK_AND_ASSIGN(std::vector<uint16_t> ports,
                       strata::testing::ListeningTcpPorts(node_->pid()));
  std::vector<uint16_t> expected = {PortOf(node_->grpc_address()), PortOf(address_),
                                    PortOf(node_->http_address())};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(ports, expected) << "the node listens on a port it was not told to";
  std::vector<strata::testing::HostileStream> streams = strata::testing::HostileStreams(7);
  for (uint16_t port : ports) {
    for (const strata::testing::HostileStream& stream : streams) {
      SCOPED_TRACE(absl::StrCat(stream.name, " to port ", port));
      ASSERT_OK(strata::testing::SendRawStream(absl::StrCat("127.0.0.1:", port), stream.bytes,
                                               absl::Milliseconds(5)));
    }
    EXPECT_CODE(node_->WaitExit(absl::ZeroDuration()).status(), absl::StatusCode::kDeadlineExceeded)
        << "the node died after the streams to port " << port << "\n"
        << node_->StderrText();
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TestClient> client, TestClient::Connect(address_));
  const BlobContent blob = store::dataplane::testing::MakeBlob(ns_, 8, 44);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, Put(*client, blob));
  ASSERT_OK_AND_ASSIGN(const v1::ReadResponse read, Read(key, 8));
  const std::vector<wire::ByteRange> ranges = Ranges(read.grants(0));
  RangeBuffers buffers(ranges);
  ASSERT_OK(client->Fetch(read.lease_id(), key, ranges, buffers.dests).status);
  EXPECT_TRUE(buffers.Hold(blob.bytes, ranges));
  ASSERT_OK(Release(read.lease_id()));
}

// A reader that takes no more bytes (its FETCH_DATA payloads held, never acknowledged — as a
// SIGSTOPped process's would be): after --dataplane_transfer_timeout the node fails that
// connection and releases what the transfer held, so the lease's release and a SIGTERM drain
// finish at once instead of after the drain timeout.
class StalledReaderTest : public DataPlaneEndToEndTest {
 protected:
  const std::vector<std::string>& ExtraArgs() const override {
    static const std::vector<std::string> args = {"--dataplane_transfer_timeout=1s"};
    return args;
  }
};

TEST_F(StalledReaderTest, TheTransferDeadlineReleasesWhatAStalledReaderHeld) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TestClient> writer, TestClient::Connect(address_));
  const BlobContent blob = store::dataplane::testing::MakeBlob(ns_, 8, 45);
  ASSERT_OK_AND_ASSIGN(const radix::BlobKey key, Put(*writer, blob));
  ASSERT_OK_AND_ASSIGN(const v1::ReadResponse read, Read(key, 8));
  const std::vector<wire::ByteRange> ranges = Ranges(read.grants(0));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TestClient> reader,
                       TestClient::Connect(address_, {.hold_data = true}));
  RangeBuffers buffers(ranges);
  std::shared_ptr<FetchCall> call = reader->StartFetch(read.lease_id(), key, ranges, buffers.dests);
  ASSERT_TRUE(call->WaitForData(1));
  // The fetch ends for the reader: its connection is failed by the node.
  ASSERT_TRUE(call->Wait());
  EXPECT_FALSE(call->outcome().status.ok());
  ASSERT_OK(Release(read.lease_id()));
  const absl::Time stop = absl::Now();
  node_->Signal(SIGTERM);
  ASSERT_OK_AND_ASSIGN(const int code, node_->WaitExit(absl::Seconds(15)));
  EXPECT_EQ(code, 0);
  EXPECT_LT(absl::Now() - stop, absl::Seconds(10)) << "the drain waited for the stalled reader";
  EXPECT_FALSE(absl::StrContains(node_->StderrText(), "still in flight")) << node_->StderrText();
}

}  // namespace

}  // namespace strata::integration::data_plane_e2e_test
