#include "strata/tiering/dram_arena.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/base/byte_size.h"
#include "strata/base/status_test_macros.h"

namespace strata::tiering {
namespace {

using ::strata::base::kKiB;
using ::strata::base::kMiB;

std::unique_ptr<DramArena> MustCreate(uint64_t capacity, bool try_hugetlb = true) {
  DramArenaOptions options;
  options.capacity_bytes = capacity;
  options.name = "strata-dram-test";
  options.try_hugetlb = try_hugetlb;
  absl::StatusOr<std::unique_ptr<DramArena>> arena = DramArena::Create(options);
  EXPECT_TRUE(arena.ok()) << arena.status();
  return arena.ok() ? std::move(*arena) : nullptr;
}

Extent MustAllocate(Tier& tier, uint64_t bytes) {
  absl::StatusOr<Extent> extent = tier.Allocate(bytes);
  EXPECT_TRUE(extent.ok()) << extent.status();
  return extent.ok() ? *extent : Extent{};
}

// A byte pattern that differs per (tag, position): xorshift64 words.
std::vector<std::byte> Pattern(uint64_t tag, size_t size) {
  std::vector<std::byte> bytes(size);
  uint64_t x = tag * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < size; i += sizeof(x)) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(bytes.data() + i, &x, std::min(sizeof(x), size - i));
  }
  return bytes;
}

// A counter of the kernel's 2 MiB hugetlb pool (the pool MFD_HUGE_2MB draws from), or 0
// where the pool does not exist.
uint64_t HugePagePoolCounter(const std::string& name) {
  std::ifstream file("/sys/kernel/mm/hugepages/hugepages-2048kB/" + name);
  uint64_t pages = 0;
  file >> pages;
  return pages;
}

// Sets the soft RLIMIT_FSIZE to `soft` (at most the hard limit; RLIM_INFINITY is the
// largest rlim_t) for one scope and restores the old limits after it.
class ScopedFileSizeLimit {
 public:
  explicit ScopedFileSizeLimit(rlim_t soft) {
    EXPECT_EQ(::getrlimit(RLIMIT_FSIZE, &saved_), 0);
    struct rlimit limit = saved_;
    limit.rlim_cur = std::min(soft, saved_.rlim_max);
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0) << std::strerror(errno);
  }
  ~ScopedFileSizeLimit() { EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &saved_), 0); }
  ScopedFileSizeLimit(const ScopedFileSizeLimit&) = delete;
  ScopedFileSizeLimit& operator=(const ScopedFileSizeLimit&) = delete;
  rlim_t hard() const { return saved_.rlim_max; }

 private:
  struct rlimit saved_ {};
};

TEST(DramArenaTest, CreateReportsItsBacking) {
  std::unique_ptr<DramArena> arena = MustCreate(16 * kMiB);
  ASSERT_NE(arena, nullptr);
  EXPECT_GE(arena->fd(), 0);
  EXPECT_NE(arena->base(), nullptr);
  EXPECT_EQ(arena->capacity(), 16 * kMiB);
  EXPECT_GE(arena->mapped_bytes(), arena->capacity());
  EXPECT_EQ(arena->kind(), report::Tier::kDram);
  if (HugePagePoolCounter("nr_hugepages") == 0 &&
      HugePagePoolCounter("nr_overcommit_hugepages") == 0) {
    // No 2 MiB hugetlb pages here, reserved or surplus: the fallback must have been taken.
    EXPECT_NE(arena->huge_page_mode(), HugePageMode::kHugeTlb);
  }
  std::unique_ptr<DramArena> plain = MustCreate(16 * kMiB, /*try_hugetlb=*/false);
  ASSERT_NE(plain, nullptr);
  EXPECT_NE(plain->huge_page_mode(), HugePageMode::kHugeTlb);
  EXPECT_EQ(HugePageModeName(plain->huge_page_mode()).empty(), false);
}

TEST(DramArenaTest, PopulatedArenaWorks) {
  DramArenaOptions options;
  options.capacity_bytes = 8 * kMiB;
  options.populate = true;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DramArena> arena, DramArena::Create(options));
  const Extent extent = MustAllocate(*arena, 8 * kMiB);
  const std::vector<std::byte> data = Pattern(3, extent.length);
  ASSERT_OK(arena->Write(extent, 0, data));
  std::vector<std::byte> back(extent.length);
  ASSERT_OK(arena->Read(extent, 0, absl::MakeSpan(back)));
  EXPECT_EQ(back, data);
}

// Anonymous memory: reads and writes as the memfd does, but nothing to share. kAuto picks a
// memfd unless only anonymous memory gets transparent hugepages, and says which.
TEST(DramArenaTest, AnonymousBackingWorksAndCannotBeShared) {
  for (const DramBacking backing : {DramBacking::kAnonymous, DramBacking::kAuto}) {
    DramArenaOptions options;
    options.capacity_bytes = 8 * kMiB;
    options.populate = true;
    options.backing = backing;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<DramArena> arena, DramArena::Create(options));
    const Extent extent = MustAllocate(*arena, 8 * kMiB);
    const std::vector<std::byte> data = Pattern(5, extent.length);
    ASSERT_OK(arena->Write(extent, 0, data));
    std::vector<std::byte> back(extent.length);
    ASSERT_OK(arena->Read(extent, 0, absl::MakeSpan(back)));
    EXPECT_EQ(back, data);
    if (backing == DramBacking::kAnonymous || !arena->shareable()) {
      EXPECT_FALSE(arena->shareable());
      EXPECT_EQ(arena->fd(), -1);
      EXPECT_CODE(arena->OpenReadOnlyFd(), absl::StatusCode::kFailedPrecondition);
    } else {
      EXPECT_GE(arena->fd(), 0);
      EXPECT_OK(arena->OpenReadOnlyFd().status());
    }
  }
}

TEST(DramArenaTest, CreateRejectsBadOptions) {
  DramArenaOptions options;
  options.capacity_bytes = 0;
  EXPECT_CODE(DramArena::Create(options), absl::StatusCode::kInvalidArgument);
  options.capacity_bytes = kMiB + 4 * kKiB;  // not a multiple of the 64 KiB granule
  EXPECT_CODE(DramArena::Create(options), absl::StatusCode::kInvalidArgument);
  options.capacity_bytes = 16 * kMiB;
  options.large_extent_bytes = options.max_extent_bytes + 1;
  EXPECT_CODE(DramArena::Create(options), absl::StatusCode::kInvalidArgument);
}

TEST(DramArenaTest, MappingFailureBecomesResourceExhausted) {
  // 2^56 bytes is more address space than any x86-64 (at most 2^56 - 4 KiB with 5-level
  // paging) or arm64 (at most 2^52) process has: mmap fails with ENOMEM, which must
  // surface as RESOURCE_EXHAUSTED. ftruncate to 2^56 succeeds on a memfd unless
  // RLIMIT_FSIZE is lower (ulimit -f), so lift the soft limit to the hard one; where the
  // hard limit is finite the arena refuses before ftruncate, also RESOURCE_EXHAUSTED.
  ScopedFileSizeLimit limit(RLIM_INFINITY);
  const bool unlimited = limit.hard() == RLIM_INFINITY;
  DramArenaOptions options;
  options.capacity_bytes = uint64_t{1} << 56;
  const absl::Status status = DramArena::Create(options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_THAT(std::string(status.message()),
              ::testing::HasSubstr(unlimited ? "mmap" : "RLIMIT_FSIZE"));
}

TEST(DramArenaTest, FileSizeLimitIsResourceExhaustedNotSigxfsz) {
  // Under `ulimit -f` an ftruncate past the limit raises SIGXFSZ, whose default action
  // kills the process; the arena must refuse first. Both the hugetlb and the plain path.
  for (const bool try_hugetlb : {true, false}) {
    absl::Status status;
    {
      ScopedFileSizeLimit limit(4 * kMiB);
      DramArenaOptions options;
      options.capacity_bytes = 16 * kMiB;
      options.try_hugetlb = try_hugetlb;
      status = DramArena::Create(options).status();
    }
    EXPECT_CODE(status, absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("RLIMIT_FSIZE"));
  }
  // Within the limit the arena is created.
  ScopedFileSizeLimit limit(16 * kMiB);
  DramArenaOptions options;
  options.capacity_bytes = 16 * kMiB;
  options.try_hugetlb = false;
  EXPECT_OK(DramArena::Create(options));
}

TEST(DramArenaTest, WriteThenReadRoundTrips) {
  std::unique_ptr<DramArena> arena = MustCreate(16 * kMiB);
  ASSERT_NE(arena, nullptr);
  const Extent extent = MustAllocate(*arena, kMiB + 1);
  EXPECT_EQ(extent.length, kMiB + 64 * kKiB);
  const std::vector<std::byte> data = Pattern(7, extent.length);
  ASSERT_TRUE(arena->Write(extent, 0, data).ok());
  std::vector<std::byte> back(extent.length);
  ASSERT_TRUE(arena->Read(extent, 0, absl::MakeSpan(back)).ok());
  EXPECT_EQ(back, data);
  // Partial reads and writes at an offset.
  const std::vector<std::byte> patch = Pattern(8, 1000);
  ASSERT_TRUE(arena->Write(extent, 4321, patch).ok());
  std::vector<std::byte> window(1000);
  ASSERT_TRUE(arena->Read(extent, 4321, absl::MakeSpan(window)).ok());
  EXPECT_EQ(window, patch);
  // Data() is a view of the same bytes.
  EXPECT_EQ(std::memcmp(arena->Data(extent).data() + 4321, patch.data(), patch.size()), 0);
  EXPECT_EQ(arena->Data(extent).size(), extent.length);
  EXPECT_EQ(arena->Data(extent).data(), arena->base() + extent.offset);
}

TEST(DramArenaTest, RangesOutsideTheExtentAreOutOfRange) {
  std::unique_ptr<DramArena> arena = MustCreate(16 * kMiB);
  ASSERT_NE(arena, nullptr);
  const Extent extent = MustAllocate(*arena, 128 * kKiB);
  std::vector<std::byte> buffer(64 * kKiB);
  EXPECT_EQ(arena->Read(extent, 64 * kKiB + 1, absl::MakeSpan(buffer)).code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(arena->Write(extent, 64 * kKiB + 1, buffer).code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(arena->Read(extent, ~uint64_t{0}, absl::MakeSpan(buffer)).code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(arena->Read(extent, 200 * kKiB, absl::Span<std::byte>()).code(),
            absl::StatusCode::kOutOfRange);
  // Exactly up to the end is fine, as is an empty range at the end.
  EXPECT_TRUE(arena->Read(extent, 64 * kKiB, absl::MakeSpan(buffer)).ok());
  EXPECT_TRUE(arena->Write(extent, 128 * kKiB, absl::Span<const std::byte>()).ok());
  // An extent that is not inside the arena at all.
  EXPECT_EQ(arena->Read(Extent{16 * kMiB, 64 * kKiB}, 0, absl::MakeSpan(buffer)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(arena->Write(Extent{0, 0}, 0, absl::Span<const std::byte>()).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DramArenaTest, SecondMappingOfTheFdSeesTheSameBytesButCannotWrite) {
  std::unique_ptr<DramArena> arena = MustCreate(8 * kMiB);
  ASSERT_NE(arena, nullptr);
  ASSERT_TRUE(arena->write_sealed()) << "this kernel lacks F_SEAL_FUTURE_WRITE";
  const Extent extent = MustAllocate(*arena, 2 * kMiB);
  const std::vector<std::byte> data = Pattern(11, extent.length);
  ASSERT_TRUE(arena->Write(extent, 0, data).ok());

  // Not even the node's own read-write fd maps the file writable once it is sealed.
  errno = 0;
  EXPECT_EQ(
      ::mmap(nullptr, arena->mapped_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, arena->fd(), 0),
      MAP_FAILED);
  EXPECT_EQ(errno, EPERM);
  void* other = ::mmap(nullptr, arena->mapped_bytes(), PROT_READ, MAP_SHARED, arena->fd(), 0);
  ASSERT_NE(other, MAP_FAILED) << std::strerror(errno);
  auto* other_bytes = static_cast<std::byte*>(other);
  ASSERT_NE(other_bytes, arena->base());
  EXPECT_EQ(std::memcmp(other_bytes + extent.offset, data.data(), data.size()), 0);
  // A write through the arena's own mapping is seen by the other one.
  const std::vector<std::byte> reply = Pattern(12, 4096);
  ASSERT_OK(arena->Write(extent, 8192, reply));
  EXPECT_EQ(std::memcmp(other_bytes + extent.offset + 8192, reply.data(), reply.size()), 0);
  ASSERT_EQ(::munmap(other, arena->mapped_bytes()), 0);

  // The file is sealed: nobody holding the fd can shrink it under the node.
  EXPECT_NE(::ftruncate(arena->fd(), 0), 0);
  EXPECT_EQ(errno, EPERM);
}

TEST(DramArenaTest, ReadOnlyFdCanNeitherWriteNorPunchHoles) {
  std::unique_ptr<DramArena> arena = MustCreate(8 * kMiB);
  ASSERT_NE(arena, nullptr);
  // 2 MiB: a whole hugetlb page, the smallest hole a hugetlb file punches.
  const Extent extent = MustAllocate(*arena, 2 * kMiB);
  const std::vector<std::byte> data = Pattern(21, extent.length);
  ASSERT_OK(arena->Write(extent, 0, data));
  ASSERT_OK_AND_ASSIGN(internal::UniqueFd read_only, arena->OpenReadOnlyFd());
  ASSERT_TRUE(read_only.valid());
  EXPECT_NE(read_only.get(), arena->fd());

  // A writable shared mapping is refused; a read-only one sees the blob.
  errno = 0;
  EXPECT_EQ(::mmap(nullptr, arena->mapped_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED,
                   read_only.get(), 0),
            MAP_FAILED);
  EXPECT_EQ(errno, EACCES);
  void* view = ::mmap(nullptr, arena->mapped_bytes(), PROT_READ, MAP_SHARED, read_only.get(), 0);
  ASSERT_NE(view, MAP_FAILED) << std::strerror(errno);
  EXPECT_EQ(std::memcmp(static_cast<std::byte*>(view) + extent.offset, data.data(), data.size()),
            0);

  // Neither a hole punched in the blob nor a write() gets through.
  errno = 0;
  EXPECT_NE(::fallocate(read_only.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                        static_cast<off_t>(extent.offset), static_cast<off_t>(extent.length)),
            0);
  EXPECT_EQ(errno, EBADF);
  const char byte = 1;
  EXPECT_EQ(::pwrite(read_only.get(), &byte, 1, static_cast<off_t>(extent.offset)), -1);
  EXPECT_EQ(errno, EBADF);
  EXPECT_NE(::ftruncate(read_only.get(), 0), 0);
  std::vector<std::byte> back(extent.length);
  ASSERT_OK(arena->Read(extent, 0, absl::MakeSpan(back)));
  EXPECT_EQ(back, data);
  EXPECT_EQ(std::memcmp(static_cast<std::byte*>(view) + extent.offset, data.data(), data.size()),
            0);
  ASSERT_EQ(::munmap(view, arena->mapped_bytes()), 0);

  // The ways around a read-only fd, as a hostile same-host client would try them: open it
  // again read-write through /proc (allowed: the memfd's inode is 0777), then map, write,
  // punch, or mprotect a read-only mapping to writable. The write seal refuses each.
  ASSERT_TRUE(arena->write_sealed());
  const std::string path = absl::StrCat("/proc/self/fd/", read_only.get());
  internal::UniqueFd reopened(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(reopened.valid()) << std::strerror(errno);
  errno = 0;
  EXPECT_EQ(
      ::mmap(nullptr, arena->mapped_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, reopened.get(), 0),
      MAP_FAILED);
  EXPECT_EQ(errno, EPERM);
  EXPECT_EQ(::pwrite(reopened.get(), &byte, 1, static_cast<off_t>(extent.offset)), -1);
  EXPECT_EQ(errno, EPERM);
  EXPECT_NE(::fallocate(reopened.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                        static_cast<off_t>(extent.offset), static_cast<off_t>(extent.length)),
            0);
  EXPECT_EQ(errno, EPERM);
  EXPECT_NE(::ftruncate(reopened.get(), 0), 0);
  view = ::mmap(nullptr, arena->mapped_bytes(), PROT_READ, MAP_SHARED, reopened.get(), 0);
  ASSERT_NE(view, MAP_FAILED) << std::strerror(errno);
  errno = 0;
  EXPECT_NE(::mprotect(view, arena->mapped_bytes(), PROT_READ | PROT_WRITE), 0);
  EXPECT_EQ(errno, EACCES);
  // A private (copy-on-write) writable mapping is allowed: it writes only the client's copy.
  void* cow = ::mmap(nullptr, arena->mapped_bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE,
                     reopened.get(), 0);
  if (cow != MAP_FAILED) {
    std::memset(static_cast<std::byte*>(cow) + extent.offset, 0x5a, 4096);
    ASSERT_EQ(::munmap(cow, arena->mapped_bytes()), 0);
  }
  ASSERT_EQ(::munmap(view, arena->mapped_bytes()), 0);
  ASSERT_OK(arena->Read(extent, 0, absl::MakeSpan(back)));
  EXPECT_EQ(back, data);
}

TEST(DramArenaTest, StatsFollowAllocationsAndCounters) {
  std::unique_ptr<DramArena> arena = MustCreate(16 * kMiB);
  ASSERT_NE(arena, nullptr);
  TierStats stats = arena->Stats();
  EXPECT_EQ(stats.tier, report::Tier::kDram);
  EXPECT_EQ(stats.capacity_bytes, 16 * kMiB);
  EXPECT_EQ(stats.used_bytes, 0u);
  EXPECT_EQ(stats.blobs, 0u);
  const Extent a = MustAllocate(*arena, kMiB);
  const Extent b = MustAllocate(*arena, 100);
  stats = arena->Stats();
  EXPECT_EQ(stats.used_bytes, kMiB + 64 * kKiB);
  EXPECT_EQ(stats.blobs, 2u);
  EXPECT_EQ(stats.free_bytes(), 16 * kMiB - kMiB - 64 * kKiB);
  arena->counters().RecordHit(3);
  arena->counters().RecordMiss();
  arena->counters().RecordEviction();
  arena->counters().RecordPromotion(2);
  arena->counters().RecordDemotion(5);
  arena->Free(a);
  stats = arena->Stats();
  EXPECT_EQ(stats.used_bytes, 64 * kKiB);
  EXPECT_EQ(stats.blobs, 1u);
  EXPECT_EQ(stats.hits, 3u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.evictions, 1u);
  EXPECT_EQ(stats.promotions, 2u);
  EXPECT_EQ(stats.demotions, 5u);
  arena->Free(b);
  EXPECT_EQ(arena->AllocatorStats().free_extents, 1u);
  EXPECT_EQ(arena->ExternalFragmentation(), 0.0);
}

TEST(DramArenaTest, FullArenaFailsAllocationWithResourceExhausted) {
  std::unique_ptr<DramArena> arena = MustCreate(4 * kMiB);
  ASSERT_NE(arena, nullptr);
  const Extent all = MustAllocate(*arena, 4 * kMiB);
  EXPECT_EQ(arena->Allocate(64 * kKiB).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(arena->Allocate(0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(arena->Allocate((uint64_t{1} << 30) + 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  arena->Free(all);
  EXPECT_TRUE(arena->Allocate(64 * kKiB).ok());
}

TEST(DramArenaTest, BatchFormsRunEveryOperationAndCompleteOnce) {
  std::unique_ptr<DramArena> arena = MustCreate(8 * kMiB);
  ASSERT_NE(arena, nullptr);
  const Extent a = MustAllocate(*arena, 64 * kKiB);
  const Extent b = MustAllocate(*arena, 64 * kKiB);
  const std::vector<std::byte> pa = Pattern(1, 1000), pb = Pattern(2, 1000);
  int calls = 0;
  arena->WriteBatch({TierWrite{a, 0, pa}, TierWrite{b, 100, pb}, TierWrite{b, 64 * kKiB, pb}},
                    [&](std::vector<absl::Status> statuses) {
                      ++calls;
                      ASSERT_EQ(statuses.size(), 3u);
                      EXPECT_TRUE(statuses[0].ok());
                      EXPECT_TRUE(statuses[1].ok());
                      EXPECT_EQ(statuses[2].code(), absl::StatusCode::kOutOfRange);
                    });
  EXPECT_EQ(calls, 1);
  std::vector<std::byte> ra(1000), rb(1000);
  arena->ReadBatch({TierRead{a, 0, absl::MakeSpan(ra)}, TierRead{b, 100, absl::MakeSpan(rb)}},
                   [&](std::vector<absl::Status> statuses) {
                     ++calls;
                     ASSERT_EQ(statuses.size(), 2u);
                     EXPECT_TRUE(statuses[0].ok());
                     EXPECT_TRUE(statuses[1].ok());
                   });
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(ra, pa);
  EXPECT_EQ(rb, pb);
}

TEST(DramArenaTest, ConcurrentAllocateWriteReadFreeKeepsBlobsApart) {
  constexpr int kThreads = 4;
  constexpr int kIterations = 250;
  constexpr size_t kHeldPerThread = 6;
  std::unique_ptr<DramArena> arena = MustCreate(12 * kMiB);
  ASSERT_NE(arena, nullptr);
  std::atomic<int> corrupt{0};
  std::atomic<int> exhausted{0};

  auto worker = [&](int thread) {
    std::mt19937_64 rng(1000 + thread);
    struct Held {
      Extent extent;
      uint64_t tag;
      size_t size;
    };
    std::vector<Held> held;
    auto verify_and_free = [&](const Held& h) {
      std::vector<std::byte> back(h.size);
      if (!arena->Read(h.extent, 0, absl::MakeSpan(back)).ok() || back != Pattern(h.tag, h.size)) {
        corrupt.fetch_add(1);
      }
      arena->Free(h.extent);
    };
    for (int i = 0; i < kIterations; ++i) {
      const size_t size = 1 + rng() % (1 * kMiB);
      const uint64_t tag = (uint64_t(thread) << 32) | i;
      absl::StatusOr<Extent> extent = arena->Allocate(size);
      if (!extent.ok()) {
        if (extent.status().code() != absl::StatusCode::kResourceExhausted) corrupt.fetch_add(1);
        exhausted.fetch_add(1);
        if (!held.empty()) {
          verify_and_free(held.front());
          held.erase(held.begin());
        }
        continue;
      }
      if (!arena->Write(*extent, 0, Pattern(tag, size)).ok()) corrupt.fetch_add(1);
      held.push_back({*extent, tag, size});
      if (held.size() > kHeldPerThread) {
        const size_t victim = rng() % held.size();
        verify_and_free(held[victim]);
        held.erase(held.begin() + victim);
      }
    }
    for (const Held& h : held) verify_and_free(h);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (std::thread& t : threads) t.join();

  EXPECT_EQ(corrupt.load(), 0);
  const TierStats stats = arena->Stats();
  EXPECT_EQ(stats.used_bytes, 0u);
  EXPECT_EQ(stats.blobs, 0u);
  EXPECT_EQ(arena->AllocatorStats().free_extents, 1u);
  EXPECT_EQ(arena->AllocatorStats().allocations + arena->AllocatorStats().failed_allocations,
            static_cast<uint64_t>(kThreads * kIterations));
}

}  // namespace
}  // namespace strata::tiering
