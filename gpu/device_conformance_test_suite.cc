#include "gpu/device_conformance_test_suite.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "strata/base/status_test_macros.h"

namespace strata::gpu {
namespace {

using absl::StatusCode;

constexpr size_t kAbsurdBytes = size_t{1} << 50;  // 1 PiB: no device has it

std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(n);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

bool IsAligned(const void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

// Page-aligned host memory, freed with std::free.
struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
std::unique_ptr<uint8_t, FreeDeleter> AlignedHostBytes(size_t bytes) {
  return std::unique_ptr<uint8_t, FreeDeleter>(
      static_cast<uint8_t*>(std::aligned_alloc(4096, bytes)));
}

}  // namespace

void DeviceConformanceTest::SetUp() {
  absl::StatusOr<std::unique_ptr<Device>> device = GetParam().open();
  if (absl::IsUnavailable(device.status())) {
    GTEST_SKIP() << "no " << GetParam().name << " device: " << device.status();
  }
  ASSERT_OK(device);
  device_ = std::move(device).value();
}

void DeviceConformanceTest::TearDown() {
  if (device_ == nullptr) return;
  const DeviceStats s = device_->stats();
  EXPECT_EQ(s.device_buffers, 0u);
  EXPECT_EQ(s.device_bytes, 0u);
  EXPECT_EQ(s.pinned_host_buffers, 0u);
  EXPECT_EQ(s.pinned_host_bytes, 0u);
  EXPECT_EQ(s.streams, 0u);
  EXPECT_EQ(s.events, 0u);
  EXPECT_EQ(s.registered_host_ranges, 0u);
}

TEST_P(DeviceConformanceTest, DescribesItself) {
  EXPECT_FALSE(device_->name().empty());
  EXPECT_GE(device_->ordinal(), -1);
  EXPECT_NE(device_->memory_kind(), MemoryKind::kPinnedHost);
  ASSERT_OK_AND_ASSIGN(DeviceMemoryInfo info, device_->GetMemoryInfo());
  EXPECT_GT(info.total_bytes, 0u);
  EXPECT_LE(info.free_bytes, info.total_bytes);
}

TEST_P(DeviceConformanceTest, AllocateReturnsAlignedBufferAndResetFreesIt) {
  ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, device_->Allocate(1000));
  EXPECT_FALSE(buffer.empty());
  EXPECT_EQ(buffer.size(), 1000u);
  EXPECT_EQ(buffer.kind(), device_->memory_kind());
  EXPECT_EQ(buffer.device_ordinal(), device_->ordinal());
  EXPECT_TRUE(IsAligned(buffer.data(), 256)) << buffer.data();
  EXPECT_EQ(device_->stats().device_buffers, 1u);
  EXPECT_EQ(device_->stats().device_bytes, 1000u);

  buffer.Reset();
  EXPECT_TRUE(buffer.empty());
  EXPECT_EQ(buffer.data(), nullptr);
  EXPECT_EQ(buffer.size(), 0u);
  EXPECT_EQ(device_->stats().device_buffers, 0u);
  EXPECT_EQ(device_->stats().device_bytes, 0u);
  buffer.Reset();  // no-op on an empty buffer
}

TEST_P(DeviceConformanceTest, PinnedHostMemoryIsHostAccessible) {
  ASSERT_OK_AND_ASSIGN(DeviceBuffer pinned, device_->AllocatePinnedHost(8192));
  EXPECT_EQ(pinned.kind(), MemoryKind::kPinnedHost);
  EXPECT_EQ(pinned.size(), 8192u);
  EXPECT_TRUE(IsAligned(pinned.data(), 256));
  std::memset(pinned.data(), 0x5A, pinned.size());
  EXPECT_EQ(static_cast<uint8_t*>(pinned.data())[8191], 0x5A);
  EXPECT_EQ(device_->stats().pinned_host_buffers, 1u);
  EXPECT_EQ(device_->stats().pinned_host_bytes, 8192u);
  EXPECT_EQ(device_->stats().device_buffers, 0u);
}

TEST_P(DeviceConformanceTest, ZeroByteAllocationIsInvalidArgument) {
  EXPECT_CODE(device_->Allocate(0), StatusCode::kInvalidArgument);
  EXPECT_CODE(device_->AllocatePinnedHost(0), StatusCode::kInvalidArgument);
}

TEST_P(DeviceConformanceTest, AbsurdAllocationIsResourceExhaustedAndDeviceStaysUsable) {
  EXPECT_CODE(device_->Allocate(kAbsurdBytes), StatusCode::kResourceExhausted);
  EXPECT_CODE(device_->AllocatePinnedHost(kAbsurdBytes), StatusCode::kResourceExhausted);
  EXPECT_EQ(device_->stats().device_buffers, 0u);
  EXPECT_EQ(device_->stats().pinned_host_buffers, 0u);

  // A failed allocation leaves no error behind for the next operations.
  ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, device_->Allocate(4096));
  ASSERT_OK_AND_ASSIGN(Stream stream, device_->CreateStream());
  std::vector<uint8_t> host(4096, 0);
  ASSERT_OK(device_->MemsetAsync(buffer.data(), 0x11, buffer.size(), stream));
  ASSERT_OK(device_->CopyToHostAsync(host.data(), buffer.data(), host.size(), stream));
  ASSERT_OK(device_->Synchronize(stream));
  EXPECT_EQ(host, std::vector<uint8_t>(4096, 0x11));
}

TEST_P(DeviceConformanceTest, RoundTripThroughPinnedMemory) {
  constexpr size_t kBytes = (1 << 20) + 37;  // odd size on purpose
  const std::vector<uint8_t> expected = RandomBytes(kBytes, 1);
  ASSERT_OK_AND_ASSIGN(DeviceBuffer src, device_->AllocatePinnedHost(kBytes));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer dst, device_->AllocatePinnedHost(kBytes));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer a, device_->Allocate(kBytes));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer b, device_->Allocate(kBytes));
  std::memcpy(src.data(), expected.data(), kBytes);
  std::memset(dst.data(), 0, kBytes);

  ASSERT_OK_AND_ASSIGN(Stream stream, device_->CreateStream());
  ASSERT_OK(device_->CopyToDeviceAsync(a.data(), src.data(), kBytes, stream));
  ASSERT_OK(device_->CopyDeviceToDeviceAsync(b.data(), a.data(), kBytes, stream));
  ASSERT_OK(device_->CopyToHostAsync(dst.data(), b.data(), kBytes, stream));
  ASSERT_OK(device_->Synchronize(stream));
  EXPECT_EQ(std::memcmp(dst.data(), expected.data(), kBytes), 0);
}

TEST_P(DeviceConformanceTest, RoundTripThroughPageableMemoryAtOffsets) {
  constexpr size_t kBytes = 300'001;
  const std::vector<uint8_t> expected = RandomBytes(kBytes, 2);
  std::vector<uint8_t> back(kBytes, 0);
  ASSERT_OK_AND_ASSIGN(DeviceBuffer a, device_->Allocate(kBytes + 1000));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer b, device_->Allocate(kBytes + 1000));
  auto* a_mid = static_cast<uint8_t*>(a.data()) + 999;  // unaligned offsets
  auto* b_mid = static_cast<uint8_t*>(b.data()) + 3;

  ASSERT_OK_AND_ASSIGN(Stream stream, device_->CreateStream());
  ASSERT_OK(device_->CopyToDeviceAsync(a_mid, expected.data(), kBytes, stream));
  ASSERT_OK(device_->CopyDeviceToDeviceAsync(b_mid, a_mid, kBytes, stream));
  ASSERT_OK(device_->CopyToHostAsync(back.data(), b_mid, kBytes, stream));
  ASSERT_OK(device_->Synchronize(stream));
  EXPECT_EQ(back, expected);
}

TEST_P(DeviceConformanceTest, MemsetWritesOnlyItsRange) {
  constexpr size_t kBytes = 4096;
  ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, device_->Allocate(kBytes));
  ASSERT_OK_AND_ASSIGN(Stream stream, device_->CreateStream());
  auto* base = static_cast<uint8_t*>(buffer.data());
  ASSERT_OK(device_->MemsetAsync(base, 0x00, kBytes, stream));
  ASSERT_OK(device_->MemsetAsync(base + 100, 0xAB, 200, stream));
  std::vector<uint8_t> host(kBytes, 0xFF);
  ASSERT_OK(device_->CopyToHostAsync(host.data(), base, kBytes, stream));
  ASSERT_OK(device_->Synchronize(stream));
  for (size_t i = 0; i < kBytes; ++i) {
    ASSERT_EQ(host[i], (i >= 100 && i < 300) ? 0xAB : 0x00) << "at " << i;
  }
}

TEST_P(DeviceConformanceTest, ZeroByteCopiesAreNoOps) {
  ASSERT_OK_AND_ASSIGN(Stream stream, device_->CreateStream());
  EXPECT_OK(device_->CopyToDeviceAsync(nullptr, nullptr, 0, stream));
  EXPECT_OK(device_->CopyToHostAsync(nullptr, nullptr, 0, stream));
  EXPECT_OK(device_->CopyDeviceToDeviceAsync(nullptr, nullptr, 0, stream));
  EXPECT_OK(device_->MemsetAsync(nullptr, 0, 0, stream));
  EXPECT_OK(device_->Synchronize(stream));
}

TEST_P(DeviceConformanceTest, NullOrWrappingPointersAreInvalidArgument) {
  ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, device_->Allocate(64));
  ASSERT_OK_AND_ASSIGN(Stream stream, device_->CreateStream());
  std::vector<uint8_t> host(64);
  EXPECT_CODE(device_->CopyToDeviceAsync(nullptr, host.data(), 64, stream),
              StatusCode::kInvalidArgument);
  EXPECT_CODE(device_->CopyToDeviceAsync(buffer.data(), nullptr, 64, stream),
              StatusCode::kInvalidArgument);
  EXPECT_CODE(device_->CopyToHostAsync(nullptr, buffer.data(), 64, stream),
              StatusCode::kInvalidArgument);
  EXPECT_CODE(device_->CopyDeviceToDeviceAsync(buffer.data(), nullptr, 64, stream),
              StatusCode::kInvalidArgument);
  EXPECT_CODE(device_->MemsetAsync(nullptr, 1, 64, stream), StatusCode::kInvalidArgument);
  EXPECT_CODE(device_->CopyToHostAsync(host.data(), buffer.data(), SIZE_MAX, stream),
              StatusCode::kInvalidArgument);
  EXPECT_CODE(device_->RegisterHost(nullptr, 64), StatusCode::kInvalidArgument);
  EXPECT_CODE(device_->RegisterHost(host.data(), 0), StatusCode::kInvalidArgument);
  EXPECT_CODE(device_->UnregisterHost(nullptr), StatusCode::kInvalidArgument);
}

TEST_P(DeviceConformanceTest, EmptyStreamIsInvalidArgument) {
  ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, device_->Allocate(64));
  std::vector<uint8_t> host(64);
  Stream never_created;
  EXPECT_TRUE(never_created.empty());
  EXPECT_EQ(never_created.device(), nullptr);
  EXPECT_CODE(device_->CopyToDeviceAsync(buffer.data(), host.data(), 64, never_created),
              StatusCode::kInvalidArgument);
  EXPECT_CODE(device_->Synchronize(never_created), StatusCode::kInvalidArgument);

  ASSERT_OK_AND_ASSIGN(Stream stream, device_->CreateStream());
  Stream taker = std::move(stream);
  EXPECT_TRUE(stream.empty());  // NOLINT(bugprone-use-after-move): checking moved-from state
  EXPECT_CODE(device_->CopyToHostAsync(host.data(), buffer.data(), 64, stream),
              StatusCode::kInvalidArgument);
  EXPECT_OK(device_->CopyToHostAsync(host.data(), buffer.data(), 64, taker));
  EXPECT_OK(device_->Synchronize(taker));
}

TEST_P(DeviceConformanceTest, StreamsAndEventsOfAnotherDeviceAreInvalidArgument) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Device> other, GetParam().open());
  {
    ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, device_->Allocate(64));
    ASSERT_OK_AND_ASSIGN(Stream mine, device_->CreateStream());
    ASSERT_OK_AND_ASSIGN(Event my_event, device_->CreateEvent());
    ASSERT_OK_AND_ASSIGN(Stream theirs, other->CreateStream());
    ASSERT_OK_AND_ASSIGN(Event their_event, other->CreateEvent());
    EXPECT_EQ(mine.device(), device_.get());
    EXPECT_EQ(theirs.device(), other.get());
    std::vector<uint8_t> host(64);

    EXPECT_CODE(device_->CopyToHostAsync(host.data(), buffer.data(), 64, theirs),
                StatusCode::kInvalidArgument);
    EXPECT_CODE(device_->MemsetAsync(buffer.data(), 0, 64, theirs), StatusCode::kInvalidArgument);
    EXPECT_CODE(device_->Synchronize(theirs), StatusCode::kInvalidArgument);
    EXPECT_CODE(my_event.Record(theirs), StatusCode::kInvalidArgument);
    EXPECT_CODE(device_->WaitForEvent(mine, their_event), StatusCode::kInvalidArgument);
    EXPECT_CODE(device_->WaitForEvent(mine, Event()), StatusCode::kInvalidArgument);
    EXPECT_OK(my_event.Record(mine));
    EXPECT_OK(device_->WaitForEvent(mine, my_event));
    EXPECT_OK(device_->Synchronize(mine));
  }
  EXPECT_EQ(other->stats().streams, 0u);
  EXPECT_EQ(other->stats().events, 0u);
}

TEST_P(DeviceConformanceTest, EmptyEventIsFailedPrecondition) {
  ASSERT_OK_AND_ASSIGN(Stream stream, device_->CreateStream());
  Event event;
  EXPECT_TRUE(event.empty());
  EXPECT_CODE(event.Record(stream), StatusCode::kFailedPrecondition);
  EXPECT_CODE(event.Synchronize(), StatusCode::kFailedPrecondition);
  EXPECT_CODE(event.Query(), StatusCode::kFailedPrecondition);
}

TEST_P(DeviceConformanceTest, EventNeverRecordedIsReady) {
  ASSERT_OK_AND_ASSIGN(Event event, device_->CreateEvent());
  EXPECT_EQ(event.device(), device_.get());
  ASSERT_OK_AND_ASSIGN(bool ready, event.Query());
  EXPECT_TRUE(ready);
  EXPECT_OK(event.Synchronize());
}

TEST_P(DeviceConformanceTest, EventSynchronizeWaitsForCapturedWork) {
  constexpr size_t kBytes = 8 << 20;
  const std::vector<uint8_t> expected = RandomBytes(kBytes, 3);
  ASSERT_OK_AND_ASSIGN(DeviceBuffer src, device_->AllocatePinnedHost(kBytes));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer dst, device_->AllocatePinnedHost(kBytes));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, device_->Allocate(kBytes));
  ASSERT_OK_AND_ASSIGN(Stream stream, device_->CreateStream());
  ASSERT_OK_AND_ASSIGN(Event event, device_->CreateEvent());
  std::memcpy(src.data(), expected.data(), kBytes);
  std::memset(dst.data(), 0, kBytes);

  ASSERT_OK(device_->CopyToDeviceAsync(buffer.data(), src.data(), kBytes, stream));
  ASSERT_OK(device_->CopyToHostAsync(dst.data(), buffer.data(), kBytes, stream));
  ASSERT_OK(event.Record(stream));
  ASSERT_OK(event.Synchronize());
  ASSERT_OK_AND_ASSIGN(bool ready, event.Query());
  EXPECT_TRUE(ready);
  EXPECT_EQ(std::memcmp(dst.data(), expected.data(), kBytes), 0);
}

TEST_P(DeviceConformanceTest, QueryBecomesTrueOnceCapturedWorkCompletes) {
  constexpr size_t kBytes = 4 << 20;
  ASSERT_OK_AND_ASSIGN(DeviceBuffer a, device_->Allocate(kBytes));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer b, device_->Allocate(kBytes));
  ASSERT_OK_AND_ASSIGN(Stream stream, device_->CreateStream());
  ASSERT_OK_AND_ASSIGN(Event event, device_->CreateEvent());
  for (int i = 0; i < 8; ++i) {
    ASSERT_OK(device_->CopyDeviceToDeviceAsync(b.data(), a.data(), kBytes, stream));
  }
  ASSERT_OK(event.Record(stream));
  // Poll: the answer may be false for a while, but must turn true without any
  // other call forcing the work.
  bool ready = false;
  for (int polls = 0; polls < 1'000'000 && !ready; ++polls) {
    ASSERT_OK_AND_ASSIGN(ready, event.Query());
    if (!ready) std::this_thread::yield();
  }
  EXPECT_TRUE(ready);
  EXPECT_OK(device_->Synchronize(stream));
}

TEST_P(DeviceConformanceTest, RecordingAgainMovesTheMarker) {
  constexpr size_t kBytes = 1 << 20;
  ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, device_->Allocate(kBytes));
  ASSERT_OK_AND_ASSIGN(Stream stream, device_->CreateStream());
  ASSERT_OK_AND_ASSIGN(Event event, device_->CreateEvent());
  std::vector<uint8_t> host(kBytes, 0);

  ASSERT_OK(device_->MemsetAsync(buffer.data(), 0x01, kBytes, stream));
  ASSERT_OK(event.Record(stream));
  ASSERT_OK(event.Synchronize());
  ASSERT_OK(device_->MemsetAsync(buffer.data(), 0x02, kBytes, stream));
  ASSERT_OK(device_->CopyToHostAsync(host.data(), buffer.data(), kBytes, stream));
  ASSERT_OK(event.Record(stream));
  ASSERT_OK(event.Synchronize());
  EXPECT_EQ(host, std::vector<uint8_t>(kBytes, 0x02));
}

TEST_P(DeviceConformanceTest, EventOrdersWorkAcrossStreams) {
  constexpr size_t kBytes = 16 << 20;
  const std::vector<uint8_t> expected = RandomBytes(kBytes, 4);
  ASSERT_OK_AND_ASSIGN(DeviceBuffer src, device_->AllocatePinnedHost(kBytes));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer dst, device_->AllocatePinnedHost(kBytes));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer a, device_->Allocate(kBytes));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer b, device_->Allocate(kBytes));
  ASSERT_OK_AND_ASSIGN(Stream producer, device_->CreateStream());
  ASSERT_OK_AND_ASSIGN(Stream consumer, device_->CreateStream());
  ASSERT_OK_AND_ASSIGN(Event produced, device_->CreateEvent());
  std::memcpy(src.data(), expected.data(), kBytes);
  std::memset(dst.data(), 0, kBytes);

  // producer: H2D into a. consumer: waits, then a -> b -> host. Only the
  // consumer is synchronized: the event alone orders the producer's copy first.
  ASSERT_OK(device_->CopyToDeviceAsync(a.data(), src.data(), kBytes, producer));
  ASSERT_OK(produced.Record(producer));
  ASSERT_OK(device_->WaitForEvent(consumer, produced));
  ASSERT_OK(device_->CopyDeviceToDeviceAsync(b.data(), a.data(), kBytes, consumer));
  ASSERT_OK(device_->CopyToHostAsync(dst.data(), b.data(), kBytes, consumer));
  ASSERT_OK(device_->Synchronize(consumer));
  EXPECT_EQ(std::memcmp(dst.data(), expected.data(), kBytes), 0);
  ASSERT_OK_AND_ASSIGN(bool ready, produced.Query());
  EXPECT_TRUE(ready);
}

TEST_P(DeviceConformanceTest, RegisteredHostMemoryServesCopies) {
  constexpr size_t kBytes = 64 << 10;
  auto host = AlignedHostBytes(kBytes);
  ASSERT_NE(host, nullptr);
  const std::vector<uint8_t> expected = RandomBytes(kBytes, 5);
  std::memcpy(host.get(), expected.data(), kBytes);

  ASSERT_OK(device_->RegisterHost(host.get(), kBytes));
  EXPECT_EQ(device_->stats().registered_host_ranges, 1u);
  EXPECT_CODE(device_->RegisterHost(host.get(), kBytes), StatusCode::kAlreadyExists);

  ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, device_->Allocate(kBytes));
  ASSERT_OK_AND_ASSIGN(Stream stream, device_->CreateStream());
  ASSERT_OK(device_->CopyToDeviceAsync(buffer.data(), host.get(), kBytes, stream));
  ASSERT_OK(device_->Synchronize(stream));
  std::memset(host.get(), 0, kBytes);
  ASSERT_OK(device_->CopyToHostAsync(host.get(), buffer.data(), kBytes, stream));
  ASSERT_OK(device_->Synchronize(stream));
  EXPECT_EQ(std::memcmp(host.get(), expected.data(), kBytes), 0);

  ASSERT_OK(device_->UnregisterHost(host.get()));
  EXPECT_EQ(device_->stats().registered_host_ranges, 0u);
  EXPECT_CODE(device_->UnregisterHost(host.get()), StatusCode::kNotFound);
}

TEST_P(DeviceConformanceTest, MovedFromOwnersAreEmptyAndFreeNothing) {
  ASSERT_OK_AND_ASSIGN(DeviceBuffer first, device_->Allocate(128));
  void* const first_data = first.data();

  DeviceBuffer second(std::move(first));
  EXPECT_TRUE(first.empty());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(first.size(), 0u);
  EXPECT_EQ(first.device_ordinal(), -1);
  EXPECT_EQ(second.data(), first_data);
  EXPECT_EQ(second.size(), 128u);
  EXPECT_EQ(device_->stats().device_buffers, 1u);
  first.Reset();  // frees nothing
  EXPECT_EQ(device_->stats().device_buffers, 1u);

  // Move-assigning over a live buffer frees the old one.
  ASSERT_OK_AND_ASSIGN(DeviceBuffer third, device_->Allocate(256));
  EXPECT_EQ(device_->stats().device_buffers, 2u);
  third = std::move(second);
  EXPECT_EQ(device_->stats().device_buffers, 1u);
  EXPECT_EQ(device_->stats().device_bytes, 128u);
  EXPECT_EQ(third.data(), first_data);
  {
    DeviceBuffer scoped = std::move(third);
    EXPECT_EQ(device_->stats().device_buffers, 1u);
  }  // destruction frees
  EXPECT_EQ(device_->stats().device_buffers, 0u);

  ASSERT_OK_AND_ASSIGN(Stream stream, device_->CreateStream());
  ASSERT_OK_AND_ASSIGN(Stream other_stream, device_->CreateStream());
  EXPECT_EQ(device_->stats().streams, 2u);
  other_stream = std::move(stream);
  EXPECT_EQ(device_->stats().streams, 1u);
  EXPECT_FALSE(other_stream.empty());

  ASSERT_OK_AND_ASSIGN(Event event, device_->CreateEvent());
  Event moved_event(std::move(event));
  EXPECT_TRUE(event.empty());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(device_->stats().events, 1u);
  EXPECT_OK(moved_event.Record(other_stream));
  EXPECT_OK(moved_event.Synchronize());
  moved_event.Reset();
  EXPECT_EQ(device_->stats().events, 0u);
  other_stream.Reset();
  EXPECT_EQ(device_->stats().streams, 0u);
}

TEST_P(DeviceConformanceTest, ManySmallAllocationsAreDistinctAndAllFreed) {
  ASSERT_OK_AND_ASSIGN(Stream stream, device_->CreateStream());
  std::vector<DeviceBuffer> buffers;
  std::set<void*> distinct;
  uint64_t bytes = 0;
  for (int i = 0; i < 2000; ++i) {
    const size_t size = 64 + i % 7;
    ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, device_->Allocate(size));
    ASSERT_OK(device_->MemsetAsync(buffer.data(), static_cast<uint8_t>(i), size, stream));
    distinct.insert(buffer.data());
    bytes += size;
    buffers.push_back(std::move(buffer));
  }
  std::vector<DeviceBuffer> pinned;
  for (int i = 0; i < 50; ++i) {
    ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, device_->AllocatePinnedHost(100));
    pinned.push_back(std::move(buffer));
  }
  ASSERT_OK(device_->Synchronize(stream));
  EXPECT_EQ(distinct.size(), 2000u);
  EXPECT_EQ(device_->stats().device_buffers, 2000u);
  EXPECT_EQ(device_->stats().device_bytes, bytes);
  EXPECT_EQ(device_->stats().pinned_host_buffers, 50u);

  // Spot-check that the buffers are separate memory.
  uint8_t probe = 0;
  ASSERT_OK(device_->CopyToHostAsync(&probe, buffers[1234].data(), 1, stream));
  ASSERT_OK(device_->Synchronize(stream));
  EXPECT_EQ(probe, static_cast<uint8_t>(1234));

  buffers.clear();
  pinned.clear();
  EXPECT_EQ(device_->stats().device_buffers, 0u);
  EXPECT_EQ(device_->stats().device_bytes, 0u);
  EXPECT_EQ(device_->stats().pinned_host_buffers, 0u);
}

TEST_P(DeviceConformanceTest, ThreadsShareTheDevice) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 20;
  constexpr size_t kBytes = 64 << 10;
  std::vector<std::thread> threads;
  std::vector<absl::Status> results(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t, &results] {
      results[t] = [&]() -> absl::Status {
        absl::StatusOr<Stream> stream = device_->CreateStream();
        if (!stream.ok()) return stream.status();
        absl::StatusOr<DeviceBuffer> buffer = device_->Allocate(kBytes);
        if (!buffer.ok()) return buffer.status();
        std::vector<uint8_t> back(kBytes);
        for (int round = 0; round < kRounds; ++round) {
          const std::vector<uint8_t> bytes = RandomBytes(kBytes, 100 + t * kRounds + round);
          absl::Status s =
              device_->CopyToDeviceAsync(buffer->data(), bytes.data(), kBytes, *stream);
          if (s.ok()) s = device_->CopyToHostAsync(back.data(), buffer->data(), kBytes, *stream);
          if (s.ok()) s = device_->Synchronize(*stream);
          if (!s.ok()) return s;
          if (back != bytes) return absl::InternalError("round trip mismatch");
        }
        return absl::OkStatus();
      }();
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_OK(results[t]) << "thread " << t;
}

}  // namespace strata::gpu
