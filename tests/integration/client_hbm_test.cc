// The HBM tier end to end, on the host gpu::Device (CI has no GPU): a NodeServer in this
// process (the host device's memory is shared only within a process, standing in for CUDA
// IPC) with an HBM tier it shares with same-host GPU readers, and libstrata reading into
// device memory over the same-host channel. Blobs read twice are copied into HBM; later
// reads copy them device to device from the node's pool, byte for byte, layer by layer,
// each verified on the device; a copy that does not verify (the pool written by a process
// that opened it) is read again from the arena; the node's tier stats and curve show the
// tier through Client::Tiers.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "client_e2e_support.h"
#include "strata/base/status_test_macros.h"
#include "strata/client.h"
#include "strata/gpu/device.h"
#include "strata/store/core/node_engine.h"
#include "strata/store/http/node_snapshot.h"
#include "strata/store/node/node_server.h"
#include "strata/testing/temp_dir.h"
#include "strata/tiering/hbm_tier.h"

// This file's own namespace: the folder's tests share unity batches.
namespace strata::integration::client_hbm_test {
namespace {

using strata::testing::ScopedTempDir;

constexpr auto Device = DeviceMemory::Descriptor;

class ClientHbmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store::node::NodeConfig config;
    config.grpc_listen = "127.0.0.1:0";
    config.dataplane_listen = "127.0.0.1:0";
    config.http_listen = "127.0.0.1:0";
    config.dram_bytes = uint64_t{64} << 20;
    config.ssd_bytes = 0;
    config.hbm_bytes = uint64_t{16} << 20;
    config.hbm_device = "host";
    config.hbm_admit_reads = 2;
    config.same_host_share_hbm = true;
    config.data_dir = dir_;
    ASSERT_OK_AND_ASSIGN(server_, store::node::NodeServer::Start(config));
    ASSERT_OK_AND_ASSIGN(device_, gpu::CreateHostDevice({.memory_bytes = size_t{256} << 20}));
    memory_ = std::make_unique<DeviceMemory>(device_);
    Connect(absl::ZeroDuration());
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
  }

  void Connect(absl::Duration lease_ttl) {
    ClientOptions options = ClientOptionsFor(server_->grpc_address(), kSameHost);
    options.lease_ttl = lease_ttl;
    options.open_device = memory_->Opener();
    client_.reset();
    ASSERT_OK_AND_ASSIGN(client_, Client::Connect(options));
  }

  // Reads the matched context twice (admission), then waits until every blob of it has its
  // HBM copy.
  void MakeHot(const Namespace& ns, const MatchResult& match) {
    const uint32_t pages = match.matched_pages;
    const gpu::DeviceBuffer scratch = memory_->Of(pages * page_bytes_);
    for (int i = 0; i < 2; ++i)
      ASSERT_OK(client_->Read(ns, match.segments, pages, Device(scratch)));
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    for (;;) {
      server_->engine().AdmitToHbm();
      ASSERT_OK_AND_ASSIGN(const MatchResult now, client_->Match(ns, tokens_));
      bool all = true;
      for (const Segment& s : now.segments) all = all && s.tier == Tier::kHbm;
      if (all) break;
      ASSERT_LT(absl::Now(), deadline) << "the context never got its HBM copies";
      absl::SleepFor(absl::Milliseconds(10));
    }
  }

  ScopedTempDir temp_dir_{"strata-client-hbm"};
  const std::string dir_ = temp_dir_.path();
  std::unique_ptr<store::node::NodeServer> server_;
  std::shared_ptr<gpu::Device> device_;
  std::unique_ptr<DeviceMemory> memory_;
  std::unique_ptr<Client> client_;
  std::vector<TokenId> tokens_;
  const uint64_t page_bytes_ = ClientTestLayout().BytesPerPage();
};

TEST_F(ClientHbmTest, HotBlobsComeDeviceToDeviceFromTheNodesHbmTierByteForByte) {
  const Namespace ns = ClientTestNamespace("hbm");
  tokens_ = WriteTurnsFromDevice(*client_, *memory_, ns, 3, 8, 1);
  ASSERT_OK_AND_ASSIGN(const MatchResult match, client_->Match(ns, tokens_));
  ASSERT_EQ(match.matched_pages, 24u);
  for (const Segment& s : match.segments) EXPECT_EQ(s.tier, Tier::kDram);
  MakeHot(ns, match);
  const uint64_t before = client_->stats().device_bytes_from_hbm;
  EXPECT_EQ(before, 0u);  // the first reads came from the arena

  const gpu::DeviceBuffer context = memory_->Of(24 * page_bytes_);
  ASSERT_OK(client_->Read(ns, match.segments, 24, Device(context)));
  EXPECT_EQ(memory_->HostCopy(context, 0, context.size()), ModelBytes(tokens_, 0, 24));
  EXPECT_EQ(client_->stats().device_bytes_from_hbm, 24 * page_bytes_);

  // Layer by layer (each layer verified on the device before it is handed on).
  const gpu::DeviceBuffer layered = memory_->Of(24 * page_bytes_);
  std::vector<uint32_t> delivered;
  ASSERT_OK(client_->ReadLayers(ns, match.segments, 24, Device(layered), [&](uint32_t layer) {
    delivered.push_back(layer);
    return absl::OkStatus();
  }));
  EXPECT_EQ(delivered.size(), ClientTestLayout().num_layers);
  EXPECT_EQ(memory_->HostCopy(layered, 0, layered.size()), ModelBytes(tokens_, 0, 24));
  EXPECT_EQ(client_->stats().device_bytes_from_hbm, 48 * page_bytes_);
  EXPECT_EQ(client_->stats().checksum_failures, 0u);

  // Host reads still come from the arena, verified.
  std::vector<std::byte> host(24 * page_bytes_);
  ASSERT_OK(
      client_->Read(ns, match.segments, 24, MemoryDescriptor::Host(host.data(), host.size())));
  EXPECT_EQ(host, ModelBytes(tokens_, 0, 24));

  // The node reports the tier: its stats and its curve, through the wire.
  ASSERT_OK_AND_ASSIGN(const NodeTiers tiers, client_->Tiers());
  const report::TierStats* hbm = tiers.Find(Tier::kHbm);
  ASSERT_NE(hbm, nullptr);
  EXPECT_EQ(hbm->capacity_bytes, uint64_t{16} << 20);
  EXPECT_EQ(hbm->blobs, 3u);
  EXPECT_EQ(hbm->pages, 24u);
  EXPECT_EQ(hbm->promotions, 3u);
  EXPECT_GE(hbm->hits, 9u);  // 3 reads x 3 blobs since admission
  EXPECT_NE(tiers.CurveFor(Tier::kHbm), nullptr);
  EXPECT_GT(server_->Snapshot().same_host.bytes_granted_hbm, 0u);
}

TEST_F(ClientHbmTest, AnHbmCopyThatDoesNotVerifyIsReadAgainFromTheArena) {
  const Namespace ns = ClientTestNamespace("hbm-corrupt");
  tokens_ = WriteTurnsFromDevice(*client_, *memory_, ns, 2, 8, 2);
  ASSERT_OK_AND_ASSIGN(const MatchResult match, client_->Match(ns, tokens_));
  MakeHot(ns, match);
  // What any process that opened the pool could do: write into it (here every byte).
  tiering::HbmTier& hbm = *server_->engine().hbm();
  const std::vector<std::byte> garbage(hbm.capacity(), std::byte{0x5a});
  ASSERT_OK(hbm.Write({0, hbm.capacity()}, 0, garbage));
  const ClientStats before = client_->stats();

  const gpu::DeviceBuffer context = memory_->Of(16 * page_bytes_);
  ASSERT_OK(client_->Read(ns, match.segments, 16, Device(context)));
  EXPECT_EQ(memory_->HostCopy(context, 0, context.size()), ModelBytes(tokens_, 0, 16));
  // Layer by layer too: layer 0's copy fails before anything is handed on.
  const gpu::DeviceBuffer layered = memory_->Of(16 * page_bytes_);
  std::vector<uint32_t> delivered;
  ASSERT_OK(client_->ReadLayers(ns, match.segments, 16, Device(layered), [&](uint32_t layer) {
    delivered.push_back(layer);
    return absl::OkStatus();
  }));
  EXPECT_EQ(delivered.size(), ClientTestLayout().num_layers);
  EXPECT_EQ(memory_->HostCopy(layered, 0, layered.size()), ModelBytes(tokens_, 0, 16));
  const ClientStats after = client_->stats();
  EXPECT_GE(after.checksum_failures - before.checksum_failures, 2u);
  EXPECT_EQ(after.device_bytes_from_hbm, before.device_bytes_from_hbm);  // none of it counted
}

// A strata-node process with an HBM tier on the host device: it keeps copies, reports the
// tier, drops them on Evict(kHbm); its same-host clients (another process: the host device's
// pool cannot be opened there) read the arena, byte for byte.
TEST(ClientHbmProcessTest, ANodeProcessKeepsReportsAndEvictsHbmCopies) {
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<strata::testing::NodeProcess> node,
      StartNodeWithDataPlane(kSameHost, uint64_t{64} << 20,
                             {"--hbm_bytes=8MiB", "--hbm_device=host", "--hbm_admit_reads=2",
                              "--same_host_share_hbm=true"}));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<gpu::Device> device,
                       gpu::CreateHostDevice({.memory_bytes = size_t{64} << 20}));
  DeviceMemory memory(device);
  ClientOptions options = ClientOptionsFor(node->grpc_address(), kSameHost);
  options.open_device = memory.Opener();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client, Client::Connect(options));
  const Namespace ns = ClientTestNamespace("hbm-process");
  const std::vector<TokenId> tokens = WriteTurnsFromDevice(*client, memory, ns, 2, 8, 3);
  ASSERT_OK_AND_ASSIGN(const MatchResult match, client->Match(ns, tokens));
  const uint64_t page_bytes = ClientTestLayout().BytesPerPage();
  const gpu::DeviceBuffer context = memory.Of(16 * page_bytes);
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  bool hot = false;
  while (!hot) {
    ASSERT_OK(client->Read(ns, match.segments, 16, Device(context)));
    EXPECT_EQ(memory.HostCopy(context, 0, context.size()), ModelBytes(tokens, 0, 16));
    ASSERT_OK_AND_ASSIGN(const MatchResult now, client->Match(ns, tokens));
    hot = now.segments.size() == 2 && now.segments[0].tier == Tier::kHbm &&
          now.segments[1].tier == Tier::kHbm;
    ASSERT_LT(absl::Now(), deadline) << "the node never copied the context into HBM";
    if (!hot) absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(client->stats().device_bytes_from_hbm, 0u);  // not openable from this process
  ASSERT_OK_AND_ASSIGN(const NodeTiers tiers, client->Tiers());
  const report::TierStats* hbm = tiers.Find(Tier::kHbm);
  ASSERT_NE(hbm, nullptr);
  EXPECT_EQ(hbm->capacity_bytes, uint64_t{8} << 20);
  EXPECT_EQ(hbm->blobs, 2u);
  ASSERT_OK_AND_ASSIGN(const EvictResult evicted, client->Evict(Tier::kHbm, UINT64_MAX));
  EXPECT_GT(evicted.bytes_freed, 0u);
  ASSERT_OK_AND_ASSIGN(const MatchResult after, client->Match(ns, tokens));
  for (const Segment& s : after.segments) EXPECT_EQ(s.tier, Tier::kDram);
}

}  // namespace
}  // namespace strata::integration::client_hbm_test
