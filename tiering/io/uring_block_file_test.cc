// UringBlockFile and SsdTier::Open on a real file: under $TMPDIR, else the current (build)
// directory. Skipped, with the reason printed, where io_uring or O_DIRECT is unavailable.
#include "strata/tiering/io/uring_block_file.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/tiering/dram_arena.h"
#include "strata/tiering/io/ssd_tier.h"
#include "tiering/io/block_test_util.h"

namespace strata::tiering::io {
namespace {

using namespace ::strata::tiering::io::block_test;  // NOLINT(build/namespaces)

class UringBlockFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmpdir = std::getenv("TMPDIR");
    const std::string dir = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : ".";
    path_ = dir + "/strata_uring_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ::unlink(path_.c_str());
    // Probe: io_uring (seccomp, io_uring_disabled) and O_DIRECT on this filesystem.
    UringBlockFileOptions probe;
    probe.path = path_;
    probe.size_bytes = kMiB;
    absl::StatusOr<std::unique_ptr<UringBlockFile>> file = UringBlockFile::Open(probe);
    ::unlink(path_.c_str());
    if (!file.ok()) {
      GTEST_SKIP() << "no io_uring O_DIRECT file at " << path_ << ": " << file.status();
    }
  }
  void TearDown() override { ::unlink(path_.c_str()); }

  SsdTierOptions TierOptions(uint64_t capacity) const {
    SsdTierOptions options;
    options.path = path_;
    options.capacity_bytes = capacity;
    return options;
  }

  std::string path_;
};

TEST_F(UringBlockFileTest, OpenRejectsBadOptionsAndPaths) {
  UringBlockFileOptions options;
  options.path = path_;
  options.size_bytes = kMiB;
  options.queue_depth = 0;
  EXPECT_CODE(UringBlockFile::Open(options), absl::StatusCode::kInvalidArgument);
  options.queue_depth = 8;
  options.max_io_bytes = 1000;
  EXPECT_CODE(UringBlockFile::Open(options), absl::StatusCode::kInvalidArgument);
  options.max_io_bytes = kMiB;
  options.size_bytes = kMiB + 512;
  EXPECT_CODE(UringBlockFile::Open(options), absl::StatusCode::kInvalidArgument);
  options.size_bytes = 0;  // a new, empty file has no size to use
  EXPECT_CODE(UringBlockFile::Open(options), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(::access(path_.c_str(), F_OK), 0) << "a failed Open left the file it created";
  options.size_bytes = kMiB;
  options.create_if_missing = false;
  EXPECT_CODE(UringBlockFile::Open(options), absl::StatusCode::kNotFound);
  options.path = ".";
  options.create_if_missing = true;
  EXPECT_CODE(UringBlockFile::Open(options), absl::StatusCode::kInvalidArgument);  // a directory
}

// Many random extents written and read back in single batches, with small requests so
// that each op is split and the ring runs at full depth.
TEST_F(UringBlockFileTest, RandomExtentsRoundTripAtQueueDepth) {
  SsdTierOptions options = TierOptions(64 * kMiB);
  options.queue_depth = 8;
  options.max_io_bytes = 128 * kKiB;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SsdTier> tier, SsdTier::Open(options));
  std::mt19937_64 rng(11);
  std::vector<Extent> extents;
  uint64_t total = 0;
  while (total < 40 * kMiB) {
    ASSERT_OK_AND_ASSIGN(Extent e, tier->Allocate(64 * kKiB + rng() % (2 * kMiB)));
    extents.push_back(e);
    total += e.length;
  }
  AlignedBytes src = Aligned(total);
  AlignedBytes dst = Aligned(total);
  Fill({src.get(), total}, 12);
  std::vector<TierWrite> writes;
  std::vector<TierRead> reads;
  uint64_t at = 0;
  for (const Extent& e : extents) {
    writes.push_back({e, 0, {src.get() + at, e.length}});
    reads.push_back({e, 0, {dst.get() + at, e.length}});
    at += e.length;
  }
  absl::Notification written;
  tier->WriteBatch(std::move(writes), [&](std::vector<absl::Status> statuses) {
    for (const absl::Status& s : statuses) EXPECT_OK(s);
    written.Notify();
  });
  written.WaitForNotification();
  ASSERT_OK(tier->Flush());
  std::shuffle(reads.begin(), reads.end(), rng);
  absl::Notification read;
  tier->ReadBatch(std::move(reads), [&](std::vector<absl::Status> statuses) {
    for (const absl::Status& s : statuses) EXPECT_OK(s);
    read.Notify();
  });
  read.WaitForNotification();
  EXPECT_EQ(std::memcmp(src.get(), dst.get(), total), 0);
  const BlockFileStats stats = tier->file().Stats();
  EXPECT_EQ(stats.write_bytes, total);
  EXPECT_EQ(stats.read_bytes, total);
  EXPECT_GE(stats.submitted_sqes, 2 * total / (128 * kKiB));
  EXPECT_EQ(stats.failed_ops, 0u);
  EXPECT_EQ(tier->IoStats().bounce_bytes, 0u);
}

TEST_F(UringBlockFileTest, ConcurrentBatchesFromManyThreads) {
  SsdTierOptions options = TierOptions(32 * kMiB);
  options.queue_depth = 4;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SsdTier> tier, SsdTier::Open(options));
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      absl::StatusOr<Extent> e = tier->Allocate(4 * kMiB);
      ASSERT_OK(e);
      AlignedBytes src = Aligned(4 * kMiB);
      AlignedBytes dst = Aligned(4 * kMiB);
      for (int round = 0; round < 5; ++round) {
        Fill({src.get(), 4 * kMiB}, t * 100 + round);
        ASSERT_OK(tier->Write(*e, 0, {src.get(), 4 * kMiB}));
        ASSERT_OK(tier->Read(*e, 0, {dst.get(), 4 * kMiB}));
        ASSERT_EQ(std::memcmp(src.get(), dst.get(), 4 * kMiB), 0);
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

TEST_F(UringBlockFileTest, UnalignedBuffersGoThroughBounceBuffers) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SsdTier> tier, SsdTier::Open(TierOptions(8 * kMiB)));
  ASSERT_OK_AND_ASSIGN(Extent extent, tier->Allocate(kMiB));
  std::vector<std::byte> model(kMiB);
  Fill(absl::MakeSpan(model), 21);
  ASSERT_OK(tier->Write(extent, 0, model));  // a vector's data: any alignment
  std::mt19937_64 rng(22);
  std::vector<std::byte> scratch(20 * kKiB + 8);
  for (int round = 0; round < 100; ++round) {
    const uint64_t length = 1 + rng() % (20 * kKiB);
    const uint64_t offset = rng() % (kMiB - length + 1);
    std::byte* buffer = scratch.data() + rng() % 8;
    if (rng() % 2 == 0) {
      Fill({buffer, length}, rng());
      ASSERT_OK(tier->Write(extent, offset, {buffer, length}));
      std::memcpy(model.data() + offset, buffer, length);
    } else {
      ASSERT_OK(tier->Read(extent, offset, {buffer, length}));
      ASSERT_EQ(std::memcmp(buffer, model.data() + offset, length), 0) << "round " << round;
    }
  }
  std::vector<std::byte> all(kMiB);
  ASSERT_OK(tier->Read(extent, 0, absl::MakeSpan(all)));
  EXPECT_EQ(all, model);
  EXPECT_GT(tier->IoStats().read_modify_writes, 0u);
}

TEST_F(UringBlockFileTest, LargeOpsAreSplitIntoRequests) {
  UringBlockFileOptions options;
  options.path = path_;
  options.size_bytes = 16 * kMiB;
  options.queue_depth = 2;
  options.max_io_bytes = kMiB;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<UringBlockFile> file, UringBlockFile::Open(options));
  AlignedBytes src = Aligned(9 * kMiB + 3 * kBlock);
  AlignedBytes dst = Aligned(9 * kMiB + 3 * kBlock);
  Fill({src.get(), 9 * kMiB + 3 * kBlock}, 31);
  const uint64_t length = 9 * kMiB + 3 * kBlock;
  EXPECT_OK(file->SubmitAndWait({BlockIo::Write(5 * kBlock, {src.get(), length})})[0]);
  EXPECT_OK(file->SubmitAndWait({BlockIo::Read(5 * kBlock, {dst.get(), length})})[0]);
  EXPECT_EQ(std::memcmp(src.get(), dst.get(), length), 0);
  const BlockFileStats stats = file->Stats();
  EXPECT_EQ(stats.submitted_sqes, 20u + stats.retries + stats.short_transfers);
  EXPECT_EQ(stats.reads, 1u);
  EXPECT_EQ(stats.writes, 1u);
}

TEST_F(UringBlockFileTest, ReopenKeepsTheBytesAndGrowsTheFile) {
  AlignedBytes src = Aligned(2 * kMiB);
  Fill({src.get(), 2 * kMiB}, 41);
  Extent extent;
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<SsdTier> tier, SsdTier::Open(TierOptions(8 * kMiB)));
    ASSERT_OK_AND_ASSIGN(extent, tier->Allocate(2 * kMiB));
    ASSERT_OK(tier->Write(extent, 0, {src.get(), 2 * kMiB}));
    ASSERT_OK(tier->Flush());
  }
  SsdTierOptions options = TierOptions(12 * kMiB + 64 * kKiB);
  options.create_if_missing = false;
  options.capacity_bytes = 12 * kMiB + 1;
  EXPECT_CODE(SsdTier::Open(options), absl::StatusCode::kInvalidArgument);
  options.capacity_bytes = 12 * kMiB + 64 * kKiB;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SsdTier> tier, SsdTier::Open(options));
  struct stat st;
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), 12 * kMiB + 64 * kKiB);
  ASSERT_OK(tier->Reserve(extent));
  AlignedBytes dst = Aligned(2 * kMiB);
  ASSERT_OK(tier->Read(extent, 0, {dst.get(), 2 * kMiB}));
  EXPECT_EQ(std::memcmp(src.get(), dst.get(), 2 * kMiB), 0);
  // Allocation never hands the reserved bytes out again.
  ASSERT_OK_AND_ASSIGN(Extent other, tier->Allocate(2 * kMiB));
  EXPECT_TRUE(other.end() <= extent.offset || other.offset >= extent.end());
}

TEST_F(UringBlockFileTest, ReadsPastTheEndFailWithoutCrashing) {
  UringBlockFileOptions options;
  options.path = path_;
  options.size_bytes = 4 * kMiB;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<UringBlockFile> file, UringBlockFile::Open(options));
  AlignedBytes buffer = Aligned(2 * kMiB);
  EXPECT_CODE(file->SubmitAndWait({BlockIo::Read(3 * kMiB, {buffer.get(), 2 * kMiB})})[0],
              absl::StatusCode::kOutOfRange);
  // The file shrinks behind the block file's back: the kernel reads up to the new end
  // and then returns 0: a short read.
  ASSERT_EQ(::truncate(path_.c_str(), 3 * kMiB), 0);
  const absl::Status status =
      file->SubmitAndWait({BlockIo::Read(2 * kMiB, {buffer.get(), 2 * kMiB})})[0];
  EXPECT_CODE(status, absl::StatusCode::kDataLoss);
  EXPECT_NE(status.message().find("short read"), absl::string_view::npos) << status;
  EXPECT_OK(file->SubmitAndWait({BlockIo::Read(2 * kMiB, {buffer.get(), kMiB})})[0]);
}

TEST_F(UringBlockFileTest, RegisteredArenaUsesFixedBuffers) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SsdTier> tier, SsdTier::Open(TierOptions(16 * kMiB)));
  DramArenaOptions arena_options;
  arena_options.capacity_bytes = 8 * kMiB;
  arena_options.name = "strata-uring-test";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DramArena> arena, DramArena::Create(arena_options));
  const std::vector<absl::Span<std::byte>> regions = {{arena->base(), arena->capacity()}};
  const absl::Status registered = tier->RegisterBuffers(regions);
  if (!registered.ok()) {
    GTEST_SKIP() << "the kernel refused to register the arena (" << registered
                 << "); plain ops are used instead";
  }
  ASSERT_OK_AND_ASSIGN(Extent ssd, tier->Allocate(4 * kMiB));
  ASSERT_OK_AND_ASSIGN(Extent dram_src, arena->Allocate(4 * kMiB));
  ASSERT_OK_AND_ASSIGN(Extent dram_dst, arena->Allocate(4 * kMiB));
  Fill(arena->Data(dram_src), 51);
  ASSERT_OK(tier->Write(ssd, 0, arena->Data(dram_src)));  // demotion
  ASSERT_OK(tier->Read(ssd, 0, arena->Data(dram_dst)));   // promotion
  EXPECT_EQ(std::memcmp(arena->Data(dram_src).data(), arena->Data(dram_dst).data(), 4 * kMiB), 0);
  const BlockFileStats stats = tier->file().Stats();
  EXPECT_EQ(stats.fixed_buffer_sqes, stats.submitted_sqes);
  EXPECT_GE(stats.fixed_buffer_sqes, 8u);
  // Memory outside the registered region still works, with plain requests.
  AlignedBytes outside = Aligned(kMiB);
  ASSERT_OK(tier->Read(ssd, 0, {outside.get(), kMiB}));
  EXPECT_GT(tier->file().Stats().submitted_sqes, tier->file().Stats().fixed_buffer_sqes);
  EXPECT_EQ(std::memcmp(outside.get(), arena->Data(dram_src).data(), kMiB), 0);
}

TEST_F(UringBlockFileTest, DestructorWaitsForInFlightBatches) {
  UringBlockFileOptions options;
  options.path = path_;
  options.size_bytes = 16 * kMiB;
  options.queue_depth = 2;
  options.max_io_bytes = 256 * kKiB;
  AlignedBytes src = Aligned(16 * kMiB);
  std::atomic<int> completions{0};
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<UringBlockFile> file, UringBlockFile::Open(options));
    for (int i = 0; i < 4; ++i) {
      file->SubmitBatch({BlockIo::Write(i * 4 * kMiB, {src.get(), 4 * kMiB})},
                        [&](std::vector<absl::Status> statuses) {
                          EXPECT_OK(statuses[0]);
                          completions.fetch_add(1);
                        });
    }
    file->Flush([&](absl::Status status) {
      EXPECT_OK(status);
      completions.fetch_add(1);
    });
  }
  EXPECT_EQ(completions.load(), 5);
}

}  // namespace
}  // namespace strata::tiering::io
