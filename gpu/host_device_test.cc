// The host device: the conformance suite, plus what only the host device promises
// (a configurable memory size, and device ranges checked against live buffers).
#include "gpu/host_device.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "glog/logging.h"
#include "gtest/gtest.h"

#include "gpu/device_conformance_test_suite.h"
#include "strata/base/status_test_macros.h"
#include "strata/gpu/device.h"
#include "strata/gpu/xxh3.h"

namespace strata::gpu {
namespace {

using absl::StatusCode;

INSTANTIATE_TEST_SUITE_P(Host, DeviceConformanceTest,
                         ::testing::Values(DeviceConformanceParam{
                             "Host", [] { return CreateHostDevice(); }}),
                         DeviceConformanceParamName);

std::unique_ptr<Device> MakeHostDevice(size_t memory_bytes) {
  absl::StatusOr<std::unique_ptr<Device>> device =
      CreateHostDevice(HostDeviceOptions{.memory_bytes = memory_bytes});
  CHECK(device.ok()) << device.status();
  return std::move(device).value();
}

TEST(MemoryKindTest, Names) {
  EXPECT_EQ(MemoryKindName(MemoryKind::kHost), "host");
  EXPECT_EQ(MemoryKindName(MemoryKind::kPinnedHost), "pinned_host");
  EXPECT_EQ(MemoryKindName(MemoryKind::kDevice), "device");
  EXPECT_EQ(MemoryKindName(static_cast<MemoryKind>(42)), "unknown");
}

TEST(HostDeviceTest, IdentifiesAsHost) {
  auto device = MakeHostDevice(1 << 20);
  EXPECT_EQ(device->name(), "host");
  EXPECT_EQ(device->ordinal(), -1);
  EXPECT_EQ(device->memory_kind(), MemoryKind::kHost);
}

TEST(HostDeviceTest, DefaultMemorySizeIsPhysicalMemory) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> device, CreateHostDevice());
  ASSERT_OK_AND_ASSIGN(DeviceMemoryInfo info, device->GetMemoryInfo());
  EXPECT_GT(info.total_bytes, size_t{64} << 20);
  EXPECT_EQ(info.free_bytes, info.total_bytes);
}

TEST(HostDeviceTest, MemorySizeBoundsAllocations) {
  constexpr size_t kMemory = 1 << 20;
  auto device = MakeHostDevice(kMemory);
  ASSERT_OK_AND_ASSIGN(DeviceBuffer half, device->Allocate(kMemory / 2));
  ASSERT_OK_AND_ASSIGN(DeviceMemoryInfo info, device->GetMemoryInfo());
  EXPECT_EQ(info.total_bytes, kMemory);
  EXPECT_EQ(info.free_bytes, kMemory / 2);

  EXPECT_CODE(device->Allocate(kMemory / 2 + 1), StatusCode::kResourceExhausted);
  ASSERT_OK_AND_ASSIGN(DeviceBuffer rest, device->Allocate(kMemory / 2));
  EXPECT_CODE(device->Allocate(1), StatusCode::kResourceExhausted);
  // Pinned host memory is not device memory: it still comes.
  ASSERT_OK_AND_ASSIGN(DeviceBuffer pinned, device->AllocatePinnedHost(kMemory));

  half.Reset();
  ASSERT_OK_AND_ASSIGN(info, device->GetMemoryInfo());
  EXPECT_EQ(info.free_bytes, kMemory / 2);
  EXPECT_OK(device->Allocate(kMemory / 2));
}

class HostDeviceRangeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(buffer_, device_->Allocate(1024));
    ASSERT_OK_AND_ASSIGN(stream_, device_->CreateStream());
  }
  uint8_t* base() { return static_cast<uint8_t*>(buffer_.data()); }

  std::unique_ptr<Device> device_ = MakeHostDevice(1 << 20);
  DeviceBuffer buffer_;
  Stream stream_;
  std::vector<uint8_t> host_ = std::vector<uint8_t>(4096);
};

TEST_F(HostDeviceRangeTest, HostPointerAsDevicePointerIsInvalidArgument) {
  EXPECT_CODE(device_->CopyToDeviceAsync(host_.data(), host_.data() + 2048, 16, stream_),
              StatusCode::kInvalidArgument);
  EXPECT_CODE(device_->CopyToHostAsync(host_.data(), host_.data() + 2048, 16, stream_),
              StatusCode::kInvalidArgument);
  EXPECT_CODE(device_->CopyDeviceToDeviceAsync(base(), host_.data(), 16, stream_),
              StatusCode::kInvalidArgument);
  EXPECT_CODE(device_->MemsetAsync(host_.data(), 0, 16, stream_), StatusCode::kInvalidArgument);
}

TEST_F(HostDeviceRangeTest, RangePastTheBufferEndIsOutOfRange) {
  EXPECT_OK(device_->CopyToDeviceAsync(base() + 1000, host_.data(), 24, stream_));
  EXPECT_CODE(device_->CopyToDeviceAsync(base() + 1000, host_.data(), 25, stream_),
              StatusCode::kOutOfRange);
  EXPECT_CODE(device_->CopyToHostAsync(host_.data(), base(), 1025, stream_),
              StatusCode::kOutOfRange);
  EXPECT_CODE(device_->MemsetAsync(base() + 1, 0, 1024, stream_), StatusCode::kOutOfRange);
  // One byte past the end is outside every buffer.
  EXPECT_CODE(device_->MemsetAsync(base() + 1024, 0, 1, stream_), StatusCode::kInvalidArgument);
}

TEST_F(HostDeviceRangeTest, FreedBufferIsNoLongerADeviceRange) {
  void* const stale = buffer_.data();
  buffer_.Reset();
  EXPECT_CODE(device_->CopyToHostAsync(host_.data(), stale, 16, stream_),
              StatusCode::kInvalidArgument);
}

TEST_F(HostDeviceRangeTest, OverlappingDeviceToDeviceCopyIsInvalidArgument) {
  EXPECT_CODE(device_->CopyDeviceToDeviceAsync(base() + 8, base(), 16, stream_),
              StatusCode::kInvalidArgument);
  EXPECT_OK(device_->CopyDeviceToDeviceAsync(base() + 16, base(), 16, stream_));
}

TEST(HostDeviceTest, OverlappingRegistrationIsAlreadyExists) {
  auto device = MakeHostDevice(1 << 20);
  std::vector<uint8_t> host(8192);
  ASSERT_OK(device->RegisterHost(host.data() + 1024, 4096));
  EXPECT_CODE(device->RegisterHost(host.data(), 1025), StatusCode::kAlreadyExists);
  EXPECT_CODE(device->RegisterHost(host.data() + 5119, 10), StatusCode::kAlreadyExists);
  EXPECT_CODE(device->RegisterHost(host.data() + 2000, 10), StatusCode::kAlreadyExists);
  ASSERT_OK(device->RegisterHost(host.data(), 1024));         // adjacent below
  ASSERT_OK(device->RegisterHost(host.data() + 5120, 1024));  // adjacent above
  EXPECT_EQ(device->stats().registered_host_ranges, 3u);
  EXPECT_CODE(device->UnregisterHost(host.data() + 2000), StatusCode::kNotFound);
  EXPECT_OK(device->UnregisterHost(host.data()));
  EXPECT_OK(device->UnregisterHost(host.data() + 1024));
  EXPECT_OK(device->UnregisterHost(host.data() + 5120));
}

TEST(HostDeviceTest, IpcHandlesOpenInThisProcessOnlyAndOnlyForLiveBuffers) {
  auto exporter = MakeHostDevice(1 << 20);
  auto importer = MakeHostDevice(1 << 20);
  ASSERT_OK_AND_ASSIGN(DeviceBuffer pool, exporter->Allocate(8192));
  ASSERT_OK_AND_ASSIGN(Stream exporter_stream, exporter->CreateStream());
  std::vector<uint8_t> pattern(8192);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i * 7);
  ASSERT_OK(exporter->CopyToDeviceAsync(pool.data(), pattern.data(), 8192, exporter_stream));
  ASSERT_OK_AND_ASSIGN(const std::string handle, exporter->ExportIpc(pool));

  // Opened by another device of this process: its copies may read (and write) the pool.
  ASSERT_OK_AND_ASSIGN(void* base, importer->OpenIpc(handle));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer mine, importer->Allocate(4096));
  ASSERT_OK_AND_ASSIGN(Stream stream, importer->CreateStream());
  ASSERT_OK(importer->CopyDeviceToDeviceAsync(mine.data(), static_cast<uint8_t*>(base) + 4096, 4096,
                                              stream));
  std::vector<uint8_t> back(4096);
  ASSERT_OK(importer->CopyToHostAsync(back.data(), mine.data(), 4096, stream));
  EXPECT_EQ(std::memcmp(back.data(), pattern.data() + 4096, 4096), 0);
  // Still range-checked: past the pool's end is OUT_OF_RANGE.
  EXPECT_CODE(importer->CopyDeviceToDeviceAsync(mine.data(), static_cast<uint8_t*>(base) + 8000,
                                                4096, stream),
              StatusCode::kOutOfRange);

  // Malformed, another process's, forged: refused, never a pointer.
  EXPECT_CODE(importer->OpenIpc("not a handle").status(), StatusCode::kInvalidArgument);
  std::string other_process = handle;
  other_process.replace(other_process.find(':') + 1, other_process.find(':', 16) - 16, "1");
  EXPECT_CODE(importer->OpenIpc(other_process).status(), StatusCode::kFailedPrecondition);
  std::string forged = handle.substr(0, handle.rfind(':')) + ":4096";  // wrong size
  EXPECT_CODE(importer->OpenIpc(forged).status(), StatusCode::kNotFound);
  // A buffer of another device is not this device's to export.
  EXPECT_CODE(importer->ExportIpc(pool).status(), StatusCode::kInvalidArgument);

  ASSERT_OK(importer->CloseIpc(base));
  EXPECT_CODE(importer->CloseIpc(base), StatusCode::kNotFound);
  // Closed: no longer device memory to the importer.
  EXPECT_CODE(importer->CopyDeviceToDeviceAsync(mine.data(), base, 16, stream),
              StatusCode::kInvalidArgument);
  // Freed: the handle no longer opens.
  pool.Reset();
  EXPECT_CODE(importer->OpenIpc(handle).status(), StatusCode::kNotFound);
}

TEST(HostDeviceTest, ChecksumChunksIsXxh3OfEachChunkOfDeviceMemoryOnly) {
  auto device = MakeHostDevice(1 << 20);
  ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, device->Allocate(5 * 1000));
  ASSERT_OK_AND_ASSIGN(Stream stream, device->CreateStream());
  std::vector<uint8_t> host(5 * 1000);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint8_t>(i * 31 + 7);
  ASSERT_OK(device->CopyToDeviceAsync(buffer.data(), host.data(), host.size(), stream));
  std::vector<uint64_t> sums(5);
  ASSERT_OK(device->ChecksumChunks(buffer.data(), 1000, 5, 42, sums.data(), stream));
  const Xxh3Secrets secrets = Xxh3Secrets::For(42);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(sums[i], Xxh3(host.data() + i * 1000, 1000, secrets));
  // Host memory is not the device's; past the buffer is OUT_OF_RANGE; nothing is no-op.
  EXPECT_CODE(device->ChecksumChunks(host.data(), 1000, 5, 42, sums.data(), stream),
              StatusCode::kInvalidArgument);
  EXPECT_CODE(device->ChecksumChunks(buffer.data(), 1000, 6, 42, sums.data(), stream),
              StatusCode::kOutOfRange);
  EXPECT_CODE(device->ChecksumChunks(buffer.data(), 0, 5, 42, sums.data(), stream),
              StatusCode::kInvalidArgument);
  EXPECT_OK(device->ChecksumChunks(nullptr, 1000, 0, 42, nullptr, stream));
}

TEST(HostDeviceTest, AttentionRunsTheHostArithmeticOnDeviceMemoryOnly) {
  auto device = MakeHostDevice(1 << 20);
  ASSERT_OK_AND_ASSIGN(Stream stream, device->CreateStream());
  AttentionJob job;
  job.layers = 2;
  job.pages = 3;
  job.page_tokens = 4;
  job.heads = 2;
  job.head_dim = 8;
  job.element = reference::Element::kFloat16;
  job.row_bytes = 2 * 8 * 2;
  job.kv_block_bytes = 4 * job.row_bytes;
  job.layer_page_bytes = 2 * job.kv_block_bytes;
  std::vector<uint8_t> blob(job.BlobBytes());
  for (size_t i = 0; i < blob.size(); i += 2) {
    reference::EncodeElement(job.element, static_cast<float>(i % 97) / 64.0f - 0.75f, &blob[i]);
  }
  std::vector<float> want(16);
  AttentionJob on_host = job;
  on_host.blob = blob.data();
  on_host.out = want.data();
  RunAttentionOnHost(on_host);
  ASSERT_OK_AND_ASSIGN(DeviceBuffer data, device->Allocate(blob.size()));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer out, device->Allocate(16 * sizeof(float)));
  ASSERT_OK(device->CopyToDeviceAsync(data.data(), blob.data(), blob.size(), stream));
  job.blob = static_cast<const uint8_t*>(data.data());
  job.out = static_cast<float*>(out.data());
  ASSERT_OK(device->AttentionAsync(job, stream));
  std::vector<float> got(16);
  ASSERT_OK(device->CopyToHostAsync(got.data(), out.data(), 16 * sizeof(float), stream));
  EXPECT_EQ(std::memcmp(got.data(), want.data(), sizeof(float) * 16), 0);
  for (float x : got) EXPECT_TRUE(x == x);  // finite numbers, not NaN
  // Host memory as the blob, a blob past its buffer, a malformed job: refused.
  AttentionJob host_blob = job;
  host_blob.blob = blob.data();
  EXPECT_CODE(device->AttentionAsync(host_blob, stream), StatusCode::kInvalidArgument);
  AttentionJob longer = job;
  longer.pages = 4;
  EXPECT_CODE(device->AttentionAsync(longer, stream), StatusCode::kOutOfRange);
  AttentionJob no_heads = job;
  no_heads.heads = 0;
  EXPECT_CODE(device->AttentionAsync(no_heads, stream), StatusCode::kInvalidArgument);
}

TEST(HostDeviceDeathTest, DestroyingTheDeviceBeforeItsBuffersDies) {
  EXPECT_DEATH(
      {
        auto device = MakeHostDevice(1 << 20);
        absl::StatusOr<DeviceBuffer> buffer = device->Allocate(64);
        device.reset();
      },
      "Device destroyed while objects it made are alive: 1 device buffers");
}

}  // namespace
}  // namespace strata::gpu
