// SsdTier over MemoryBlockFile: the tier's checks, its bounce / read-modify-write path, and
// the statuses it gives for each injected fault. Every test runs with inline and with
// asynchronous completion.
#include "strata/tiering/io/ssd_tier.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/tiering/io/memory_block_file.h"
#include "tiering/io/block_test_util.h"

namespace strata::tiering::io {
namespace {

using namespace ::strata::tiering::io::block_test;  // NOLINT(build/namespaces)

constexpr uint64_t kGranule = 64 * kKiB;

SsdTierOptions Options(uint64_t capacity) {
  SsdTierOptions options;
  options.capacity_bytes = capacity;
  return options;
}

class SsdTierTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    MemoryBlockFileOptions file_options;
    file_options.size_bytes = 32 * kMiB;
    file_options.async_completion = GetParam();
    absl::StatusOr<std::unique_ptr<MemoryBlockFile>> file = MemoryBlockFile::Create(file_options);
    ASSERT_OK(file);
    file_ = file->get();
    absl::StatusOr<std::unique_ptr<SsdTier>> tier =
        SsdTier::Create(std::move(*file), Options(32 * kMiB));
    ASSERT_OK(tier);
    tier_ = std::move(*tier);
  }

  Extent MustAllocate(uint64_t bytes) {
    absl::StatusOr<Extent> extent = tier_->Allocate(bytes);
    EXPECT_OK(extent);
    return extent.ok() ? *extent : Extent{};
  }

  // Runs a read batch, checking the completion runs exactly once.
  std::vector<absl::Status> ReadAll(std::vector<TierRead> reads) {
    absl::Notification finished;
    std::atomic<int> calls{0};
    std::vector<absl::Status> result;
    tier_->ReadBatch(std::move(reads), [&](std::vector<absl::Status> statuses) {
      result = std::move(statuses);
      if (calls.fetch_add(1) == 0) finished.Notify();
    });
    finished.WaitForNotification();
    EXPECT_EQ(calls.load(), 1);
    return result;
  }
  std::vector<absl::Status> WriteAll(std::vector<TierWrite> writes) {
    absl::Notification finished;
    std::atomic<int> calls{0};
    std::vector<absl::Status> result;
    tier_->WriteBatch(std::move(writes), [&](std::vector<absl::Status> statuses) {
      result = std::move(statuses);
      if (calls.fetch_add(1) == 0) finished.Notify();
    });
    finished.WaitForNotification();
    EXPECT_EQ(calls.load(), 1);
    return result;
  }

  MemoryBlockFile* file_ = nullptr;  // owned by tier_
  std::unique_ptr<SsdTier> tier_;
};

TEST(SsdTierCreateTest, RejectsBadOptions) {
  auto make_file = [] {
    MemoryBlockFileOptions options;
    options.size_bytes = 16 * kMiB;
    return std::move(MemoryBlockFile::Create(options)).value();
  };
  EXPECT_CODE(SsdTier::Create(make_file(), Options(0)), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(SsdTier::Create(make_file(), Options(kMiB + kBlock)),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(SsdTier::Create(make_file(), Options(32 * kMiB)),
              absl::StatusCode::kInvalidArgument);  // larger than the file
  SsdTierOptions small_granule = Options(kMiB);
  small_granule.granule_bytes = 2048;
  EXPECT_CODE(SsdTier::Create(make_file(), small_granule), absl::StatusCode::kInvalidArgument);
  // Open checks the options before touching the path.
  SsdTierOptions open = Options(kMiB + kBlock);
  open.path = "/nonexistent-dir/never-created";
  EXPECT_CODE(SsdTier::Open(open), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::unique_ptr<SsdTier>> tier = SsdTier::Create(make_file(), Options(8 * kMiB));
  ASSERT_OK(tier);
  EXPECT_EQ((*tier)->kind(), report::Tier::kSsd);
  EXPECT_EQ((*tier)->capacity(), 8 * kMiB);
}

TEST_P(SsdTierTest, AlignedBuffersGoStraightToTheFile) {
  const Extent a = MustAllocate(3 * kMiB);
  const Extent b = MustAllocate(100 * kKiB);  // rounds up to 128 KiB
  EXPECT_EQ(b.length, 2 * kGranule);
  AlignedBytes src = Aligned(3 * kMiB);
  Fill({src.get(), 3 * kMiB}, 1);
  const std::vector<absl::Status> written = WriteAll({
      {a, 0, {src.get(), 3 * kMiB}},
      {b, 64 * kKiB, {src.get(), 64 * kKiB}},
  });
  ASSERT_EQ(written.size(), 2u);
  EXPECT_OK(written[0]);
  EXPECT_OK(written[1]);
  EXPECT_EQ(std::memcmp(file_->contents().data() + a.offset, src.get(), 3 * kMiB), 0);
  EXPECT_EQ(std::memcmp(file_->contents().data() + b.offset + 64 * kKiB, src.get(), 64 * kKiB), 0);
  AlignedBytes dst = Aligned(3 * kMiB);
  const std::vector<absl::Status> read = ReadAll({{a, 0, {dst.get(), 3 * kMiB}}});
  EXPECT_OK(read[0]);
  EXPECT_EQ(std::memcmp(dst.get(), src.get(), 3 * kMiB), 0);
  const SsdTierIoStats io = tier_->IoStats();
  EXPECT_EQ(io.direct_writes, 2u);
  EXPECT_EQ(io.direct_reads, 1u);
  EXPECT_EQ(io.bounced_reads + io.bounced_writes + io.bounce_bytes, 0u);
}

// Random unaligned reads and writes against a model of the extent's bytes: bounced
// writes must keep the other bytes of the blocks they touch.
TEST_P(SsdTierTest, UnalignedIoMatchesAModelOfTheBytes) {
  const Extent extent = MustAllocate(kMiB);
  std::vector<std::byte> model(kMiB);
  Fill(absl::MakeSpan(model), 2);
  ASSERT_OK(tier_->Write(extent, 0, model));
  std::mt19937_64 rng(3);
  std::vector<std::byte> scratch(64 * kKiB + 16);
  for (int round = 0; round < 200; ++round) {
    const uint64_t length = 1 + rng() % (40 * kKiB);
    const uint64_t offset = rng() % (kMiB - length + 1);
    std::byte* buffer = scratch.data() + rng() % 16;  // any address alignment
    if (rng() % 2 == 0) {
      Fill({buffer, length}, rng());
      ASSERT_OK(tier_->Write(extent, offset, {buffer, length}));
      std::memcpy(model.data() + offset, buffer, length);
    } else {
      ASSERT_OK(tier_->Read(extent, offset, {buffer, length}));
      ASSERT_EQ(std::memcmp(buffer, model.data() + offset, length), 0) << "round " << round;
    }
  }
  std::vector<std::byte> all(kMiB);
  ASSERT_OK(tier_->Read(extent, 0, absl::MakeSpan(all)));
  EXPECT_EQ(all, model);
  const SsdTierIoStats io = tier_->IoStats();
  EXPECT_GT(io.bounced_reads, 0u);
  EXPECT_GT(io.bounced_writes, 0u);
  EXPECT_GT(io.read_modify_writes, 0u);
}

TEST_P(SsdTierTest, ChecksRangesBeforeAnyIo) {
  const Extent extent = MustAllocate(kGranule);
  std::vector<std::byte> buffer(100);
  EXPECT_CODE(tier_->Read(extent, kGranule - 99, absl::MakeSpan(buffer)),
              absl::StatusCode::kOutOfRange);
  EXPECT_CODE(tier_->Write(extent, ~uint64_t{0}, buffer), absl::StatusCode::kOutOfRange);
  EXPECT_CODE(tier_->Read(Extent{32 * kMiB, kGranule}, 0, absl::MakeSpan(buffer)),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(tier_->Write(Extent{0, 0}, 0, {}), absl::StatusCode::kInvalidArgument);
  EXPECT_OK(tier_->Read(extent, kGranule, {}));  // empty at the end: nothing to do
  EXPECT_EQ(file_->Stats().batches, 0u);
}

TEST_P(SsdTierTest, ReadEioAndShortReadsAreDataLoss) {
  const Extent extent = MustAllocate(kMiB);
  AlignedBytes buffer = Aligned(kMiB);
  ASSERT_OK(tier_->Write(extent, 0, {buffer.get(), kMiB}));
  file_->InjectFault({BlockIoKind::kRead, EIO, extent.offset + 4 * kBlock, 1});
  EXPECT_CODE(tier_->Read(extent, 0, {buffer.get(), kMiB}), absl::StatusCode::kDataLoss);
  EXPECT_OK(tier_->Read(extent, 0, {buffer.get(), kMiB}));
  file_->SetReadableEnd(extent.offset + kMiB / 2);
  EXPECT_CODE(tier_->Read(extent, 0, {buffer.get(), kMiB}), absl::StatusCode::kDataLoss);
  EXPECT_CODE(tier_->Read(extent, kMiB / 2 + 3, {buffer.get() + 1, 10}),
              absl::StatusCode::kDataLoss);  // bounced too
  EXPECT_OK(tier_->Read(extent, 0, {buffer.get(), kMiB / 2}));
}

TEST_P(SsdTierTest, WriteFailuresMapToUnavailableAndResourceExhausted) {
  const Extent extent = MustAllocate(kMiB);
  AlignedBytes buffer = Aligned(kMiB);
  file_->InjectFault({BlockIoKind::kWrite, EIO});
  EXPECT_CODE(tier_->Write(extent, 0, {buffer.get(), kMiB}), absl::StatusCode::kUnavailable);
  file_->SetWriteBudget(kMiB / 2);
  EXPECT_CODE(tier_->Write(extent, 0, {buffer.get(), kMiB}), absl::StatusCode::kResourceExhausted);
  EXPECT_OK(tier_->Write(extent, 0, {buffer.get(), kMiB / 2}));
  file_->InjectFault({BlockIoKind::kWrite, EDQUOT});
  EXPECT_CODE(tier_->Write(extent, 0, {buffer.get(), kBlock}),
              absl::StatusCode::kResourceExhausted);
}

TEST_P(SsdTierTest, AFailedReadModifyWriteReadFailsTheWriteAndWritesNothing) {
  const Extent extent = MustAllocate(kGranule);
  std::vector<std::byte> before(kGranule);
  Fill(absl::MakeSpan(before), 4);
  ASSERT_OK(tier_->Write(extent, 0, before));
  file_->InjectFault({BlockIoKind::kRead, EIO, extent.offset + kBlock, kBlock});
  std::vector<std::byte> patch(10, std::byte{0});
  EXPECT_CODE(tier_->Write(extent, kBlock + 5, patch), absl::StatusCode::kDataLoss);
  std::vector<std::byte> after(kGranule);
  ASSERT_OK(tier_->Read(extent, 0, absl::MakeSpan(after)));
  EXPECT_EQ(after, before);
}

TEST_P(SsdTierTest, CorruptBytesComeBackChangedWithOk) {
  const Extent extent = MustAllocate(kGranule);
  AlignedBytes src = Aligned(kGranule);
  Fill({src.get(), kGranule}, 5);
  ASSERT_OK(tier_->Write(extent, 0, {src.get(), kGranule}));
  file_->FlipBits(extent.offset + 1234, 0x04);
  AlignedBytes dst = Aligned(kGranule);
  ASSERT_OK(tier_->Read(extent, 0, {dst.get(), kGranule}));
  EXPECT_NE(std::memcmp(dst.get(), src.get(), kGranule), 0);
  EXPECT_EQ(dst.get()[1234], src.get()[1234] ^ std::byte{0x04});
  dst.get()[1234] ^= std::byte{0x04};
  EXPECT_EQ(std::memcmp(dst.get(), src.get(), kGranule), 0);
}

TEST_P(SsdTierTest, OneCompletionPerBatchWithMixedOutcomes) {
  const Extent a = MustAllocate(kMiB);
  const Extent b = MustAllocate(kMiB);
  AlignedBytes buffer = Aligned(2 * kMiB);
  const std::vector<absl::Status> written = WriteAll({
      {a, 0, {buffer.get(), kMiB}},
      {b, 0, {buffer.get(), kMiB}},
  });
  ASSERT_OK(written[0]);
  ASSERT_OK(written[1]);
  file_->InjectFault({BlockIoKind::kRead, EIO, b.offset, kBlock});
  std::vector<std::byte> odd(333);
  const std::vector<absl::Status> read = ReadAll({
      {a, 0, {buffer.get(), kMiB}},                      // ok, direct
      {b, 0, {buffer.get() + kMiB, kMiB}},               // EIO
      {a, kMiB, {buffer.get(), 1}},                      // out of range
      {Extent{1, kGranule}, 0, {buffer.get(), kBlock}},  // not an extent of the tier
      {a, 77, absl::MakeSpan(odd)},                      // ok, bounced
      {a, 0, {}},                                        // empty
  });
  ASSERT_EQ(read.size(), 6u);
  EXPECT_OK(read[0]);
  EXPECT_CODE(read[1], absl::StatusCode::kDataLoss);
  EXPECT_CODE(read[2], absl::StatusCode::kOutOfRange);
  EXPECT_CODE(read[3], absl::StatusCode::kInvalidArgument);
  EXPECT_OK(read[4]);
  EXPECT_OK(read[5]);
  // Every op failing its checks still completes the batch exactly once (inline).
  const std::vector<absl::Status> none = ReadAll({{a, kMiB + 1, {buffer.get(), 1}}});
  EXPECT_CODE(none[0], absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(ReadAll({}).empty());
  EXPECT_TRUE(WriteAll({}).empty());
}

TEST_P(SsdTierTest, FlushReportsTheFilesOutcome) {
  EXPECT_OK(tier_->Flush());
  file_->FailNextFlush(EIO);
  EXPECT_CODE(tier_->Flush(), absl::StatusCode::kUnavailable);
  absl::Notification flushed;
  tier_->Flush([&](absl::Status status) {
    EXPECT_OK(status);
    flushed.Notify();
  });
  flushed.WaitForNotification();
  EXPECT_EQ(file_->Stats().flushes, 3u);
}

TEST_P(SsdTierTest, AllocateFreeReserveAndStats) {
  const Extent a = MustAllocate(kMiB);
  const Extent b = MustAllocate(1);
  EXPECT_EQ(b.length, kGranule);
  TierStats stats = tier_->Stats();
  EXPECT_EQ(stats.capacity_bytes, 32 * kMiB);
  EXPECT_EQ(stats.used_bytes, kMiB + kGranule);
  EXPECT_EQ(stats.blobs, 2u);
  EXPECT_CODE(tier_->Allocate(0), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(tier_->Allocate(33 * kMiB), absl::StatusCode::kResourceExhausted);
  tier_->Free(a);
  // Restart-style reservations.
  EXPECT_CODE(tier_->Reserve(b), absl::StatusCode::kAlreadyExists);
  EXPECT_CODE(tier_->Reserve(Extent{b.offset, 2 * kGranule}),
              absl::StatusCode::kFailedPrecondition);
  EXPECT_CODE(tier_->Reserve(Extent{kBlock, kGranule}), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(tier_->Reserve(Extent{32 * kMiB, kGranule}), absl::StatusCode::kInvalidArgument);
  ASSERT_OK(tier_->Reserve(Extent{16 * kMiB, 4 * kMiB}));
  stats = tier_->Stats();
  EXPECT_EQ(stats.used_bytes, 4 * kMiB + kGranule);
  EXPECT_EQ(stats.blobs, 2u);
  // The reserved extent is ordinary: usable for I/O and freeable.
  std::vector<std::byte> bytes(5000, std::byte{9});
  ASSERT_OK(tier_->Write(Extent{16 * kMiB, 4 * kMiB}, 100, bytes));
  tier_->Free(Extent{16 * kMiB, 4 * kMiB});
  tier_->Free(b);
  EXPECT_EQ(tier_->Stats().used_bytes, 0u);
  EXPECT_EQ(tier_->AllocatorStats().free_extents, 1u);
  tier_->counters().RecordHit(3);
  EXPECT_EQ(tier_->Stats().hits, 3u);
}

TEST_P(SsdTierTest, RegisterBuffersReachesTheFile) {
  AlignedBytes region = Aligned(kMiB);
  const std::vector<absl::Span<std::byte>> regions = {{region.get(), kMiB}};
  ASSERT_OK(tier_->RegisterBuffers(regions));
  ASSERT_EQ(file_->registered_regions().size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Completion, SsdTierTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Async" : "Inline";
                         });

}  // namespace
}  // namespace strata::tiering::io
