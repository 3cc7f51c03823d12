#include "strata/tiering/io/memory_block_file.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "tiering/io/block_test_util.h"

namespace strata::tiering::io {
namespace {

using namespace ::strata::tiering::io::block_test;  // NOLINT(build/namespaces)

std::unique_ptr<MemoryBlockFile> MustCreate(uint64_t size, bool async = false) {
  MemoryBlockFileOptions options;
  options.size_bytes = size;
  options.async_completion = async;
  absl::StatusOr<std::unique_ptr<MemoryBlockFile>> file = MemoryBlockFile::Create(options);
  EXPECT_TRUE(file.ok()) << file.status();
  return file.ok() ? std::move(*file) : nullptr;
}

TEST(MemoryBlockFileTest, CreateRejectsBadOptions) {
  MemoryBlockFileOptions options;
  EXPECT_CODE(MemoryBlockFile::Create(options), absl::StatusCode::kInvalidArgument);
  options.size_bytes = kBlock + 512;
  EXPECT_CODE(MemoryBlockFile::Create(options), absl::StatusCode::kInvalidArgument);
  options.size_bytes = 3 * 4000;
  options.block_size = 4000;
  EXPECT_CODE(MemoryBlockFile::Create(options), absl::StatusCode::kInvalidArgument);
}

TEST(MemoryBlockFileTest, ValidatesEveryOpAndRunsTheValidOnes) {
  auto file = MustCreate(16 * kBlock);
  AlignedBytes buffer = Aligned(4 * kBlock, 0x5a);
  std::byte* b = buffer.get();
  const std::vector<absl::Status> statuses = file->SubmitAndWait({
      BlockIo::Write(0, {b, kBlock}),                         // ok
      BlockIo::Write(100, {b, kBlock}),                       // unaligned offset
      BlockIo::Write(kBlock, {b + 1, kBlock}),                // unaligned buffer
      BlockIo::Write(kBlock, {b, 100}),                       // unaligned length
      BlockIo::Write(kBlock, {b, 0}),                         // empty
      BlockIo::Read(15 * kBlock, {b, 2 * kBlock}),            // leaves the file
      BlockIo::Read(~uint64_t{0} - kBlock + 1, {b, kBlock}),  // wraps
      BlockIo::Read(0, {b + kBlock, kBlock}),                 // ok
  });
  ASSERT_EQ(statuses.size(), 8u);
  EXPECT_OK(statuses[0]);
  for (int i : {1, 2, 3, 4}) EXPECT_CODE(statuses[i], absl::StatusCode::kInvalidArgument) << i;
  EXPECT_CODE(statuses[5], absl::StatusCode::kOutOfRange);
  EXPECT_CODE(statuses[6], absl::StatusCode::kOutOfRange);
  EXPECT_OK(statuses[7]);
  EXPECT_EQ(std::memcmp(b, b + kBlock, kBlock), 0);
  const BlockFileStats stats = file->Stats();
  EXPECT_EQ(stats.batches, 1u);
  EXPECT_EQ(stats.writes, 1u);
  EXPECT_EQ(stats.reads, 1u);
  EXPECT_EQ(stats.failed_ops, 6u);
  EXPECT_EQ(stats.write_bytes, kBlock);
  EXPECT_EQ(stats.read_bytes, kBlock);
}

TEST(MemoryBlockFileTest, FaultsHitMatchingOpsThenExpire) {
  auto file = MustCreate(64 * kBlock);
  AlignedBytes buffer = Aligned(kBlock);
  const absl::Span<std::byte> block(buffer.get(), kBlock);
  file->InjectFault({BlockIoKind::kRead, EIO, 8 * kBlock, kBlock, /*count=*/2});
  file->InjectFault({BlockIoKind::kWrite, EIO, 0, ~uint64_t{0}, /*count=*/1});
  // Reads elsewhere and of other kinds pass; the range fault fires twice.
  EXPECT_OK(file->SubmitAndWait({BlockIo::Read(7 * kBlock, block)})[0]);
  EXPECT_CODE(file->SubmitAndWait({BlockIo::Read(8 * kBlock, block)})[0],
              absl::StatusCode::kDataLoss);
  EXPECT_CODE(file->SubmitAndWait({BlockIo::Write(3 * kBlock, block)})[0],
              absl::StatusCode::kUnavailable);
  EXPECT_OK(file->SubmitAndWait({BlockIo::Write(3 * kBlock, block)})[0]);
  const absl::Status second = file->SubmitAndWait({BlockIo::Read(8 * kBlock, block)})[0];
  EXPECT_CODE(second, absl::StatusCode::kDataLoss);
  EXPECT_NE(second.message().find("32768"), absl::string_view::npos) << second;
  EXPECT_OK(file->SubmitAndWait({BlockIo::Read(8 * kBlock, block)})[0]);

  file->InjectFault({BlockIoKind::kWrite, ENOSPC, 0, ~uint64_t{0}, InjectedFault::kForever});
  for (int i = 0; i < 3; ++i) {
    EXPECT_CODE(file->SubmitAndWait({BlockIo::Write(0, block)})[0],
                absl::StatusCode::kResourceExhausted);
  }
  file->ClearFaults();
  EXPECT_OK(file->SubmitAndWait({BlockIo::Write(0, block)})[0]);
}

TEST(MemoryBlockFileTest, ShortReadsCopyWhatExistsAndReportDataLoss) {
  auto file = MustCreate(8 * kBlock);
  AlignedBytes data = Aligned(8 * kBlock, 0x11);
  ASSERT_OK(file->SubmitAndWait({BlockIo::Write(0, {data.get(), 8 * kBlock})})[0]);
  file->SetReadableEnd(5 * kBlock + 100);
  AlignedBytes out = Aligned(4 * kBlock, 0);
  const absl::Status status =
      file->SubmitAndWait({BlockIo::Read(4 * kBlock, {out.get(), 4 * kBlock})})[0];
  EXPECT_CODE(status, absl::StatusCode::kDataLoss);
  EXPECT_NE(status.message().find("short read"), absl::string_view::npos) << status;
  EXPECT_EQ(out.get()[kBlock + 99], std::byte{0x11});
  EXPECT_EQ(out.get()[kBlock + 100], std::byte{0});
  EXPECT_OK(file->SubmitAndWait({BlockIo::Read(4 * kBlock, {out.get(), kBlock})})[0]);
}

TEST(MemoryBlockFileTest, WriteBudgetRunsOutWithEnospc) {
  auto file = MustCreate(16 * kBlock);
  AlignedBytes data = Aligned(4 * kBlock, 0x22);
  file->SetWriteBudget(5 * kBlock);
  EXPECT_OK(file->SubmitAndWait({BlockIo::Write(0, {data.get(), 4 * kBlock})})[0]);
  EXPECT_CODE(file->SubmitAndWait({BlockIo::Write(4 * kBlock, {data.get(), 2 * kBlock})})[0],
              absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(file->contents()[4 * kBlock], std::byte{0});  // the failed write wrote nothing
  EXPECT_OK(file->SubmitAndWait({BlockIo::Write(4 * kBlock, {data.get(), kBlock})})[0]);
}

TEST(MemoryBlockFileTest, FlippedBitsComeBackSilently) {
  auto file = MustCreate(4 * kBlock);
  AlignedBytes data = Aligned(kBlock, 0x33);
  ASSERT_OK(file->SubmitAndWait({BlockIo::Write(kBlock, {data.get(), kBlock})})[0]);
  file->FlipBits(kBlock + 7, 0x80);
  AlignedBytes out = Aligned(kBlock);
  ASSERT_OK(file->SubmitAndWait({BlockIo::Read(kBlock, {out.get(), kBlock})})[0]);
  EXPECT_EQ(out.get()[7], std::byte{0xb3});
  EXPECT_EQ(out.get()[8], std::byte{0x33});
}

TEST(MemoryBlockFileTest, FlushCountsAndFailsOnce) {
  auto file = MustCreate(4 * kBlock);
  EXPECT_OK(file->Flush());
  file->FailNextFlush(EIO);
  EXPECT_CODE(file->Flush(), absl::StatusCode::kUnavailable);
  EXPECT_OK(file->Flush());
  EXPECT_EQ(file->Stats().flushes, 3u);
}

TEST(MemoryBlockFileTest, AsyncModeCompletesOnAnotherThreadInOrder) {
  auto file = MustCreate(64 * kBlock, /*async=*/true);
  AlignedBytes data = Aligned(kBlock, 0x44);
  const std::thread::id caller = std::this_thread::get_id();
  constexpr int kBatches = 32;
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  absl::Notification all_done;
  for (int i = 0; i < kBatches; ++i) {
    file->SubmitBatch({BlockIo::Write(i * kBlock, {data.get(), kBlock})},
                      [&, i](std::vector<absl::Status> statuses) {
                        EXPECT_EQ(statuses.size(), 1u);
                        EXPECT_OK(statuses[0]);
                        order.push_back(i);  // one worker: no race
                        threads.push_back(std::this_thread::get_id());
                        if (i == kBatches - 1) all_done.Notify();
                      });
  }
  all_done.WaitForNotification();
  ASSERT_EQ(order.size(), static_cast<size_t>(kBatches));
  for (int i = 0; i < kBatches; ++i) {
    EXPECT_EQ(order[i], i);
    EXPECT_NE(threads[i], caller);
  }
}

TEST(MemoryBlockFileTest, DestructorRunsQueuedCompletions) {
  int completed = 0;
  AlignedBytes data = Aligned(kBlock, 0x55);
  {
    auto file = MustCreate(64 * kBlock, /*async=*/true);
    for (int i = 0; i < 16; ++i) {
      file->SubmitBatch({BlockIo::Write(i * kBlock, {data.get(), kBlock})},
                        [&](std::vector<absl::Status>) { ++completed; });
    }
  }
  EXPECT_EQ(completed, 16);
}

TEST(MemoryBlockFileTest, RecordsRegisteredRegions) {
  auto file = MustCreate(4 * kBlock);
  AlignedBytes region = Aligned(8 * kBlock);
  const std::vector<absl::Span<std::byte>> regions = {{region.get(), 8 * kBlock}};
  ASSERT_OK(file->RegisterBuffers(regions));
  ASSERT_EQ(file->registered_regions().size(), 1u);
  EXPECT_EQ(file->registered_regions()[0].data(), region.get());
}

}  // namespace
}  // namespace strata::tiering::io
