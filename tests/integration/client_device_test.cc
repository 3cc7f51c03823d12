// Device memory through libstrata against a real node, on the host gpu::Device (CI has no
// GPU; tests/gpu runs the CUDA device): reads into and writes from MemoryKind::kDevice
// memory, byte for byte, whole and layer by layer, through both paths a machine without
// a CUDA-enabled UCX has — staged through the pinned pool over UCX ("Tcp"), and DMA'd
// straight out of the node's arena on its host ("SameHost") — and what is refused. The
// host device checks every device-side range against its live buffers, so a copy to or
// from the wrong place fails the test rather than landing somewhere.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include "client_e2e_support.h"
#include "strata/base/status_test_macros.h"
#include "strata/client.h"
#include "strata/gpu/device.h"

namespace strata::integration {
namespace {

using testing::NodeProcess;

constexpr uint32_t kPageTokens = 16;
constexpr auto Device = DeviceMemory::Descriptor;

class ClientDeviceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(node_, StartNodeWithDataPlane(GetParam()));
    ASSERT_OK_AND_ASSIGN(device_, gpu::CreateHostDevice({.memory_bytes = size_t{256} << 20}));
    memory_ = std::make_unique<DeviceMemory>(device_);
    Connect(size_t{8} << 20);
  }

  void Connect(size_t staging_bytes) {
    ClientOptions options = ClientOptionsFor(node_->grpc_address(), GetParam());
    options.device_staging_bytes = staging_bytes;
    options.open_device = memory_->Opener();
    client_.reset();
    ASSERT_OK_AND_ASSIGN(client_, Client::Connect(options));
  }

  std::unique_ptr<NodeProcess> node_;
  std::shared_ptr<gpu::Device> device_;
  std::unique_ptr<DeviceMemory> memory_;
  std::unique_ptr<Client> client_;
  const uint64_t page_bytes_ = ClientTestLayout().BytesPerPage();
};

TEST_P(ClientDeviceTest, WritesFromAndReadsIntoDeviceMemoryByteForByte) {
  const Namespace ns = ClientTestNamespace("device");
  const std::vector<TokenId> tokens = WriteTurnsFromDevice(*client_, *memory_, ns, 3, 8, 1);
  EXPECT_EQ(client_->stats().device_writes, 3u);
  ASSERT_OK_AND_ASSIGN(const MatchResult match, client_->Match(ns, tokens));
  ASSERT_EQ(match.matched_pages, 24u);

  // The whole context into one device buffer, as the attention kernel wants it.
  const gpu::DeviceBuffer context = memory_->Of(24 * page_bytes_);
  ASSERT_OK(client_->Read(ns, match.segments, 24, Device(context)));
  EXPECT_EQ(memory_->HostCopy(context, 0, context.size()), ModelBytes(tokens, 0, 24));

  // Ranges into buffers of their own.
  const gpu::DeviceBuffer a = memory_->Of(3 * page_bytes_);
  const gpu::DeviceBuffer b = memory_->Of(2 * page_bytes_);
  const ReadRange ranges[] = {{match.segments[0].blob, 2, 3}, {match.segments[2].blob, 6, 2}};
  const MemoryDescriptor destinations[] = {Device(a), Device(b)};
  ASSERT_OK(client_->Read(ns, ranges, destinations));
  EXPECT_EQ(memory_->HostCopy(a, 0, a.size()), ModelBytes(tokens, 2, 3));
  EXPECT_EQ(memory_->HostCopy(b, 0, b.size()), ModelBytes(tokens, 22, 2));

  const ClientStats stats = client_->stats();
  if (GetParam() == kSameHost) {
    EXPECT_EQ(stats.device_reads_direct, 2u);
    EXPECT_EQ(stats.device_reads_staged, 0u);
    EXPECT_EQ(stats.device_writes_direct, 3u);  // the device copied into the staging file
  } else if (GetParam() == kTcpDeviceDirect) {
    EXPECT_EQ(stats.device_reads_received, 2u);
    EXPECT_EQ(stats.device_reads_staged, 0u);
    EXPECT_EQ(stats.device_writes_direct, 3u);  // checksummed on the device, sent from it
  } else {
    EXPECT_EQ(stats.device_reads_staged, 2u);
    EXPECT_EQ(stats.device_reads_direct + stats.device_reads_received, 0u);
    EXPECT_EQ(stats.device_writes_direct, 0u);
  }
  EXPECT_EQ(stats.device_writes, 3u);
  EXPECT_EQ(stats.checksum_failures, 0u);
}

TEST_P(ClientDeviceTest, LayersAreHandedOnOnlyOnceTheyLandedInDeviceMemory) {
  // A small pool (2 MiB: halves of 1 MiB) makes the 4 MiB read many batches.
  Connect(size_t{2} << 20);
  const Namespace ns = ClientTestNamespace("device-layers");
  const std::vector<TokenId> tokens = WriteTurnsFromDevice(*client_, *memory_, ns, 4, 64, 2);
  ASSERT_OK_AND_ASSIGN(const MatchResult match, client_->Match(ns, tokens));
  ASSERT_EQ(match.matched_pages, 256u);
  ASSERT_GT(256 * page_bytes_, 3 * (size_t{1} << 20));
  const gpu::DeviceBuffer context = memory_->Of(256 * page_bytes_);
  const std::vector<std::byte> want = ModelBytes(tokens, 0, 256);
  const uint64_t layer_bytes = 256 * ClientTestLayout().BytesPerLayerPage();
  std::vector<uint32_t> seen;
  ASSERT_OK(client_->ReadLayers(ns, match.segments, 256, Device(context), [&](uint32_t layer) {
    seen.push_back(layer);
    // Layer `layer` is whole in device memory when it is handed on.
    EXPECT_EQ(memory_->HostCopy(context, layer * layer_bytes, layer_bytes),
              std::vector<std::byte>(want.begin() + layer * layer_bytes,
                                     want.begin() + (layer + 1) * layer_bytes))
        << "layer " << layer;
    return absl::OkStatus();
  }));
  std::vector<uint32_t> in_order(ClientTestLayout().num_layers);
  for (uint32_t l = 0; l < in_order.size(); ++l) in_order[l] = l;
  EXPECT_EQ(seen, in_order);
  EXPECT_EQ(memory_->HostCopy(context, 0, context.size()), want);

  // A callback's error stops the read and is returned.
  const absl::Status stopped = client_->ReadLayers(
      ns, match.segments, 256, Device(context),
      [](uint32_t layer) { return layer == 1 ? absl::AbortedError("enough") : absl::OkStatus(); });
  EXPECT_EQ(stopped.code(), absl::StatusCode::kAborted) << stopped;
}

TEST_P(ClientDeviceTest, WhatCannotBeDoneIsRefusedPrecisely) {
  const Namespace ns = ClientTestNamespace("device-refused");
  const std::vector<TokenId> tokens = WriteTurnsFromDevice(*client_, *memory_, ns, 1, 4, 3);
  ASSERT_OK_AND_ASSIGN(const MatchResult match, client_->Match(ns, tokens));
  const gpu::DeviceBuffer device = memory_->Of(2 * page_bytes_);
  std::vector<std::byte> host(2 * page_bytes_);
  const ReadRange ranges[] = {{match.segments[0].blob, 0, 2}, {match.segments[0].blob, 2, 2}};

  // Host and device memory in one call.
  const MemoryDescriptor mixed[] = {Device(device), Host(host)};
  EXPECT_EQ(client_->Read(ns, ranges, mixed).code(), absl::StatusCode::kInvalidArgument);
  // Memory the device did not allocate, called device memory: the device refuses the copy.
  const MemoryDescriptor fake = MemoryDescriptor::CudaDevice(host.data(), host.size(), 0);
  EXPECT_FALSE(client_->Read(ns, {&ranges[0], 1}, {&fake, 1}).ok());
  // A device this client cannot open.
  const MemoryDescriptor other = MemoryDescriptor::CudaDevice(device.data(), device.size(), 3);
  EXPECT_EQ(client_->Read(ns, {&ranges[0], 1}, {&other, 1}).code(), absl::StatusCode::kUnavailable);
  // A write from device memory larger than the pinned pool: refused where it would be
  // staged; the direct paths (the device copies into the same-host staging file, or the
  // transport sends from the device memory) need no pool.
  Connect(size_t{2} << 20);
  const uint32_t big_pages = static_cast<uint32_t>((size_t{3} << 20) / page_bytes_ + 1);
  const std::vector<TokenId> big = RandomTokens(4, size_t{big_pages} * kPageTokens);
  const gpu::DeviceBuffer big_kv = memory_->Of(big_pages * page_bytes_);
  EXPECT_EQ(client_->Write(ns, std::nullopt, big, Device(big_kv)).status().code(),
            GetParam() == "tcp" ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kOk);
  // Registration of device memory for UCX is not what this build does.
  EXPECT_EQ(client_->RegisterMemory(Device(device)).code(), absl::StatusCode::kUnimplemented);
  // And the client still reads.
  ASSERT_OK(client_->Read(ns, {&ranges[1], 1}, {&mixed[0], 1}));
  EXPECT_EQ(memory_->HostCopy(device, 0, device.size()), ModelBytes(tokens, 2, 2));
}

INSTANTIATE_TEST_SUITE_P(Paths, ClientDeviceTest,
                         ::testing::Values(std::string("tcp"), std::string(kSameHost),
                                           std::string(kTcpDeviceDirect)),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return TransportTestName(info.param);
                         });

}  // namespace
}  // namespace strata::integration
