// libstrata never hands on bytes that do not match their checksums. The node runs in-process
// (NodeServer with its data plane) so the test can corrupt a committed blob's bytes in the
// DRAM arena behind the node's back — something no wire-level test can do — and check that
// every read form answers DATA_LOSS for exactly the chunks that changed.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "client_e2e_support.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "strata/base/status_test_macros.h"
#include "strata/proto/grpc_limits.h"
#include "strata/store/node/node_server.h"
#include "strata/testing/temp_dir.h"
#include "strata/testing/wire_requests.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::client_data_loss_test {

using strata::testing::ContextWithDeadline;
using strata::testing::ScopedTempDir;
using strata::testing::ToWire;

namespace {

constexpr uint32_t kPageTokens = 16;
constexpr uint32_t kPages = 8;

class ClientDataLossTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store::node::NodeConfig config;
    config.grpc_listen = "127.0.0.1:0";
    config.dataplane_listen = "127.0.0.1:0";
    config.http_listen = "127.0.0.1:0";
    config.dram_bytes = uint64_t{64} << 20;
    config.data_dir = dir_;
    ASSERT_OK_AND_ASSIGN(server_, store::node::NodeServer::Start(config));
    ASSERT_OK_AND_ASSIGN(client_, Client::Connect(ClientOptionsFor(server_->grpc_address(), "")));
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
  }

  // The blob's first byte in the node's DRAM arena (a Read grant tells; the lease is
  // released at once).
  std::byte* BlobBytesInArena(const Namespace& ns, const BlobKey& key) {
    grpc::ChannelArguments args;
    proto::ApplyMessageLimits(&args);
    auto stub = v1::Store::NewStub(grpc::CreateCustomChannel(
        server_->grpc_address(), grpc::InsecureChannelCredentials(), args));
    v1::ReadRequest request;
    *request.mutable_ns() = ToWire(ns);
    v1::ReadRange* range = request.add_ranges();
    *range->mutable_blob() = ToWire(key);
    range->set_num_pages(1);
    range->set_layer_end(1);
    v1::ReadResponse response;
    EXPECT_TRUE(stub->Read(ContextWithDeadline().get(), request, &response).ok());
    v1::ReleaseRequest release;
    release.set_lease_id(response.lease_id());
    v1::ReleaseResponse released;
    EXPECT_TRUE(stub->Release(ContextWithDeadline().get(), release, &released).ok());
    return server_->engine().dram().base() + response.grants(0).arena_offset();
  }

  ScopedTempDir temp_dir_{"strata-client-data-loss"};
  const std::string dir_ = temp_dir_.path();
  std::unique_ptr<store::node::NodeServer> server_;
  std::unique_ptr<Client> client_;
};

TEST_F(ClientDataLossTest, CorruptChunkIsDataLossAndCleanChunksStillRead) {
  const Namespace ns = ClientTestNamespace("dataloss");
  const std::vector<TokenId> tokens = RandomTokens(21, kPages * kPageTokens);
  const std::vector<std::byte> kv = ModelBytes(tokens, 0, kPages);
  ASSERT_OK_AND_ASSIGN(WriteResult written, client_->Write(ns, std::nullopt, tokens, Source(kv)));
  ASSERT_OK_AND_ASSIGN(MatchResult match, client_->Match(ns, tokens));
  ASSERT_EQ(match.matched_pages, kPages);

  // Flip one bit of layer 2, page 5.
  const uint64_t chunk = ClientTestLayout().BytesPerLayerPage();
  std::byte* arena_blob = BlobBytesInArena(ns, written.key);
  std::byte* victim = arena_blob + (2 * kPages + 5) * chunk + 77;
  *victim ^= std::byte{0x04};

  const uint64_t page_bytes = ClientTestLayout().BytesPerPage();
  std::vector<std::byte> all(kPages * page_bytes);
  const absl::Status status = client_->Read(ns, match.segments, kPages, Host(all));
  EXPECT_CODE(status, absl::StatusCode::kDataLoss);
  EXPECT_NE(status.message().find("layer 2 page 5"), std::string::npos) << status;
  EXPECT_GE(client_->stats().checksum_failures, 1u);

  // Pages [0, 5) do not include the bad chunk: they read fine and exact.
  std::vector<std::byte> five(5 * page_bytes);
  ASSERT_OK(client_->Read(ns, match.segments, 5, Host(five)));
  EXPECT_TRUE(five == ModelBytes(tokens, 0, 5));

  // Layer by layer: layers 0 and 1 are delivered, then DATA_LOSS; layer 2 never is.
  std::vector<uint32_t> delivered;
  EXPECT_CODE(client_->ReadLayers(ns, match.segments, kPages, Host(all),
                                  [&](uint32_t layer) {
                                    delivered.push_back(layer);
                                    return absl::OkStatus();
                                  }),
              absl::StatusCode::kDataLoss);
  EXPECT_EQ(delivered, (std::vector<uint32_t>{0, 1}));

  // A batch: the clean item reads, the corrupt one is DATA_LOSS.
  std::vector<std::byte> r0(2 * page_bytes), r1(2 * page_bytes);
  const std::vector<ReadItem> items = {{{written.key, 0, 2}, Host(r0)},
                                       {{written.key, 5, 2}, Host(r1)}};
  const std::vector<absl::Status> statuses = client_->ReadBatch(ns, items);
  EXPECT_OK(statuses[0]);
  EXPECT_CODE(statuses[1], absl::StatusCode::kDataLoss);
  EXPECT_TRUE(r0 == ModelBytes(tokens, 0, 2));

  // Into device memory, every path: received straight into it and checksummed by the
  // device (device_direct), staged through the pinned pool, DMA'd from the arena (same
  // host): DATA_LOSS naming the chunk, layers before it handed on, never the bad one.
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<gpu::Device> device,
                       gpu::CreateHostDevice({.memory_bytes = size_t{64} << 20}));
  DeviceMemory memory(device);
  for (const std::string& transport :
       {std::string(kTcpDeviceDirect), std::string("tcp"), std::string(kSameHost)}) {
    SCOPED_TRACE(transport);
    ClientOptions options = ClientOptionsFor(server_->grpc_address(), transport);
    options.open_device = memory.Opener();
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> on_device, Client::Connect(options));
    const gpu::DeviceBuffer landing = memory.Of(kPages * page_bytes);
    const MemoryDescriptor into = DeviceMemory::Descriptor(landing);
    const absl::Status bad = on_device->Read(ns, match.segments, kPages, into);
    EXPECT_CODE(bad, absl::StatusCode::kDataLoss);
    EXPECT_NE(bad.message().find("layer 2 page 5"), std::string::npos) << bad;
    delivered.clear();
    EXPECT_CODE(on_device->ReadLayers(ns, match.segments, kPages, into,
                                      [&](uint32_t layer) {
                                        delivered.push_back(layer);
                                        return absl::OkStatus();
                                      }),
                absl::StatusCode::kDataLoss);
    if (transport == "tcp") {
      // Staged: layers go out a pool half at a time; this read is one half, so none.
      EXPECT_TRUE(delivered.empty());
    } else {
      EXPECT_EQ(delivered, (std::vector<uint32_t>{0, 1}));
    }
    const ClientStats stats = on_device->stats();
    EXPECT_GE(stats.checksum_failures, 1u);
    if (transport == kTcpDeviceDirect) {
      EXPECT_EQ(stats.device_reads_staged, 0u);
    }
  }

  // Restored, everything reads again.
  *victim ^= std::byte{0x04};
  ASSERT_OK(client_->Read(ns, match.segments, kPages, Host(all)));
  EXPECT_TRUE(all == kv);
}

}  // namespace
}  // namespace strata::integration::client_data_loss_test
