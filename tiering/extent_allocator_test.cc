#include "strata/tiering/extent_allocator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/base/byte_size.h"
#include "strata/base/status_test_macros.h"

namespace strata::tiering {
namespace {

using ::strata::base::kGiB;
using ::strata::base::kKiB;
using ::strata::base::kMiB;
constexpr uint64_t kGranule = 64 * kKiB;

ExtentAllocatorOptions Options(uint64_t capacity) {
  ExtentAllocatorOptions options;
  options.capacity_bytes = capacity;
  return options;
}

Extent MustAllocate(ExtentAllocator& allocator, uint64_t bytes) {
  absl::StatusOr<Extent> extent = allocator.Allocate(bytes);
  EXPECT_TRUE(extent.ok()) << extent.status();
  return extent.ok() ? *extent : Extent{};
}

TEST(ExtentAllocatorTest, ValidateRejectsBadOptions) {
  EXPECT_TRUE(ExtentAllocator::Validate(Options(kGiB)).ok());
  EXPECT_EQ(ExtentAllocator::Validate(Options(0)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExtentAllocator::Validate(Options(kGiB + 4 * kKiB)).code(),
            absl::StatusCode::kInvalidArgument);
  ExtentAllocatorOptions options = Options(kGiB);
  options.granule_bytes = 48 * kKiB;
  EXPECT_EQ(ExtentAllocator::Validate(options).code(), absl::StatusCode::kInvalidArgument);
  options = Options(kGiB);
  options.max_extent_bytes = 0;
  EXPECT_EQ(ExtentAllocator::Validate(options).code(), absl::StatusCode::kInvalidArgument);
  options.max_extent_bytes = kGiB + kKiB;
  EXPECT_EQ(ExtentAllocator::Validate(options).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ExtentAllocatorTest, ValidateBoundsLargeExtentByMaxExtent) {
  ExtentAllocatorOptions options = Options(kGiB);
  options.large_extent_bytes = 0;  // never
  EXPECT_OK(ExtentAllocator::Validate(options));
  options.large_extent_bytes = options.max_extent_bytes;
  EXPECT_OK(ExtentAllocator::Validate(options));
  options.large_extent_bytes = options.max_extent_bytes + 1;
  EXPECT_CODE(ExtentAllocator::Validate(options), absl::StatusCode::kInvalidArgument);
  // Rounding this up to granules used to wrap to 0 granules: every request "large".
  options.large_extent_bytes = ~uint64_t{0};
  EXPECT_CODE(ExtentAllocator::Validate(options), absl::StatusCode::kInvalidArgument);
  // A maximum extent above the capacity is allowed (the 1 GiB default on a small tier).
  options = Options(16 * kMiB);
  EXPECT_OK(ExtentAllocator::Validate(options));
}

TEST(ExtentAllocatorTest, LargeExtentThresholdRoundsUpToTheGranule) {
  ExtentAllocatorOptions options = Options(kGiB);
  options.large_extent_bytes = 64 * kMiB + 1;  // 64 MiB + one granule after rounding
  ExtentAllocator allocator(options);
  EXPECT_EQ(MustAllocate(allocator, 64 * kMiB).offset, 0u);
  EXPECT_EQ(MustAllocate(allocator, 64 * kMiB + 1).offset, kGiB - 64 * kMiB - kGranule);
  // At the largest allowed threshold only max-size extents come from the high end.
  options.large_extent_bytes = options.max_extent_bytes;
  options.capacity_bytes = 4 * kGiB;
  ExtentAllocator top_only(options);
  EXPECT_EQ(MustAllocate(top_only, kGiB - kGranule).offset, 0u);
  EXPECT_EQ(MustAllocate(top_only, kGiB).offset, 3 * kGiB);
}

TEST(ExtentAllocatorTest, UnusableFreeFractionOfHugeRequestsIsOne) {
  ExtentAllocator allocator(Options(4 * kGiB));  // all free; max extent 1 GiB
  EXPECT_DOUBLE_EQ(allocator.UnusableFreeFraction(kGiB), 0.0);
  // Larger than any extent Allocate hands out, although one free extent holds 4 GiB.
  EXPECT_DOUBLE_EQ(allocator.UnusableFreeFraction(kGiB + 1), 1.0);
  // Sizes whose round-up to granules used to wrap past 2^64.
  EXPECT_DOUBLE_EQ(allocator.UnusableFreeFraction(~uint64_t{0}), 1.0);
  EXPECT_DOUBLE_EQ(allocator.UnusableFreeFraction(~uint64_t{0} - kGranule + 2), 1.0);
  EXPECT_DOUBLE_EQ(allocator.UnusableFreeFraction(uint64_t{1} << 63), 1.0);
  // Larger than the capacity but within the maximum extent.
  ExtentAllocator small(Options(16 * kMiB));
  EXPECT_DOUBLE_EQ(small.UnusableFreeFraction(16 * kMiB), 0.0);
  EXPECT_DOUBLE_EQ(small.UnusableFreeFraction(16 * kMiB + 1), 1.0);
}

TEST(ExtentAllocatorTest, EdgeSizesRoundUpAndOutOfRangeSizesAreRejected) {
  ExtentAllocator allocator(Options(4 * kGiB));
  EXPECT_EQ(MustAllocate(allocator, 64 * kKiB).length, 64 * kKiB);
  EXPECT_EQ(MustAllocate(allocator, 1).length, kGranule);
  EXPECT_EQ(MustAllocate(allocator, 64 * kKiB + 1).length, 2 * kGranule);
  EXPECT_EQ(MustAllocate(allocator, kGiB).length, kGiB);
  EXPECT_EQ(MustAllocate(allocator, kGiB - 1).length, kGiB);
  EXPECT_EQ(allocator.Allocate(0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(allocator.Allocate(kGiB + 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(allocator.Allocate(~uint64_t{0}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(allocator.live_extents(), 5u);
  EXPECT_EQ(allocator.live_bytes(), 2 * kGiB + 4 * kGranule);
  EXPECT_EQ(allocator.Stats().failed_allocations, 0u);  // invalid sizes are not "full"
}

TEST(ExtentAllocatorTest, FullTierReturnsResourceExhausted) {
  ExtentAllocator allocator(Options(kGiB));
  const Extent all = MustAllocate(allocator, kGiB);
  EXPECT_EQ(all.offset, 0u);
  EXPECT_EQ(allocator.free_bytes(), 0u);
  EXPECT_EQ(allocator.Allocate(1).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(allocator.ExternalFragmentation(), 0.0);
  const ExtentAllocatorStats stats = allocator.Stats();
  EXPECT_EQ(stats.failed_allocations, 1u);
  EXPECT_EQ(stats.fragmentation_failures, 0u);  // nothing was free: a true "full"
  allocator.Free(all);
  EXPECT_EQ(MustAllocate(allocator, kGiB).offset, 0u);
}

TEST(ExtentAllocatorTest, RequestLargerThanCapacityIsExhaustedNotInvalid) {
  ExtentAllocator allocator(Options(16 * kMiB));
  EXPECT_EQ(allocator.Allocate(32 * kMiB).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(ExtentAllocatorTest, FragmentationIsMeasuredAndCounted) {
  ExtentAllocator allocator(Options(4 * kGranule));
  std::vector<Extent> extents;
  for (int i = 0; i < 4; ++i) extents.push_back(MustAllocate(allocator, kGranule));
  allocator.Free(extents[0]);
  allocator.Free(extents[2]);
  EXPECT_EQ(allocator.free_bytes(), 2 * kGranule);
  EXPECT_EQ(allocator.free_extents(), 2u);
  EXPECT_EQ(allocator.LargestFreeExtent(), kGranule);
  EXPECT_DOUBLE_EQ(allocator.ExternalFragmentation(), 0.5);
  EXPECT_DOUBLE_EQ(allocator.UnusableFreeFraction(kGranule), 0.0);
  EXPECT_DOUBLE_EQ(allocator.UnusableFreeFraction(2 * kGranule), 1.0);
  EXPECT_EQ(allocator.Allocate(2 * kGranule).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(allocator.Stats().fragmentation_failures, 1u);
}

TEST(ExtentAllocatorTest, FreeNeighboursCoalesce) {
  ExtentAllocator allocator(Options(64 * kMiB));
  const Extent a = MustAllocate(allocator, 1 * kMiB);
  const Extent b = MustAllocate(allocator, 2 * kMiB);
  const Extent c = MustAllocate(allocator, 3 * kMiB);
  const Extent d = MustAllocate(allocator, 4 * kMiB);  // keeps c away from the free tail
  EXPECT_EQ(allocator.free_extents(), 1u);
  allocator.Free(a);
  allocator.Free(c);
  EXPECT_EQ(allocator.free_extents(), 3u);  // a, c, tail
  allocator.Free(b);                        // joins a and c
  EXPECT_EQ(allocator.free_extents(), 2u);
  EXPECT_EQ(allocator.LargestFreeExtent(), 64 * kMiB - 10 * kMiB);
  std::vector<Extent> free_extents;
  allocator.ForEachFreeExtent([&](const Extent& e) { free_extents.push_back(e); });
  EXPECT_THAT(free_extents, ::testing::Contains(Extent{0, 6 * kMiB}));
  allocator.Free(d);  // joins both sides: everything is one extent again
  EXPECT_EQ(allocator.free_extents(), 1u);
  EXPECT_EQ(allocator.free_bytes(), 64 * kMiB);
  EXPECT_EQ(allocator.LargestFreeExtent(), 64 * kMiB);
  EXPECT_EQ(allocator.ExternalFragmentation(), 0.0);
  EXPECT_EQ(MustAllocate(allocator, 64 * kMiB), (Extent{0, 64 * kMiB}));
}

// Leaves holes of the given sizes (separated by live extents) and nothing else free.
std::vector<Extent> MakeHoles(ExtentAllocator& allocator, const std::vector<uint64_t>& holes) {
  std::vector<Extent> hole_extents;
  for (uint64_t size : holes) {
    hole_extents.push_back(MustAllocate(allocator, size));
    MustAllocate(allocator, kGranule);  // separator
  }
  const uint64_t rest = allocator.free_bytes();
  if (rest > 0) MustAllocate(allocator, rest);
  for (const Extent& e : hole_extents) allocator.Free(e);
  return hole_extents;
}

TEST(ExtentAllocatorTest, LargeExtentsComeFromTheHighEnd) {
  ExtentAllocator allocator(Options(kGiB));
  EXPECT_EQ(MustAllocate(allocator, 64 * kMiB).offset, kGiB - 64 * kMiB);
  EXPECT_EQ(MustAllocate(allocator, 1 * kMiB).offset, 0u);
  EXPECT_EQ(MustAllocate(allocator, 100 * kMiB).offset, kGiB - 164 * kMiB);
  EXPECT_EQ(MustAllocate(allocator, 63 * kMiB).offset, 1 * kMiB);
  EXPECT_EQ(allocator.free_extents(), 1u);

  ExtentAllocatorOptions options = Options(kGiB);
  options.large_extent_bytes = 0;  // everything from the low end
  ExtentAllocator low_only(options);
  EXPECT_EQ(MustAllocate(low_only, 64 * kMiB).offset, 0u);
  EXPECT_EQ(MustAllocate(low_only, 1 * kMiB).offset, 64 * kMiB);
}

TEST(ExtentAllocatorTest, GoodFitPicksTheSmallestClassThatFits) {
  ExtentAllocator allocator(Options(256 * kMiB));
  const std::vector<Extent> holes = MakeHoles(allocator, {16 * kMiB, 1 * kMiB, 4 * kMiB});
  EXPECT_EQ(MustAllocate(allocator, 3 * kMiB).offset, holes[2].offset);
  // Two exact 1 MiB fits remain: the 1 MiB hole and the rest of the 4 MiB one.
  const uint64_t first = MustAllocate(allocator, 1 * kMiB).offset;
  const uint64_t second = MustAllocate(allocator, 1 * kMiB).offset;
  EXPECT_THAT((std::vector<uint64_t>{first, second}),
              ::testing::UnorderedElementsAre(holes[1].offset, holes[2].offset + 3 * kMiB));
  EXPECT_EQ(MustAllocate(allocator, 8 * kMiB).offset, holes[0].offset);
  EXPECT_EQ(allocator.free_extents(), 1u);  // what is left of the 16 MiB hole
}

TEST(ExtentAllocatorTest, ExactFitInsideOneSizeClassIsFound) {
  // 65 granules and 64 granules share a size class; a request of 65 granules rounds up to
  // the next class, which is empty, so only the in-class fallback can serve it.
  ExtentAllocator allocator(Options(256 * kMiB));
  const std::vector<Extent> holes = MakeHoles(allocator, {64 * kGranule, 65 * kGranule});
  EXPECT_EQ(MustAllocate(allocator, 65 * kGranule).offset, holes[1].offset);
  EXPECT_EQ(allocator.Allocate(65 * kGranule).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(MustAllocate(allocator, 64 * kGranule).offset, holes[0].offset);
}

TEST(ExtentAllocatorTest, IsLiveKnowsExactExtents) {
  ExtentAllocator allocator(Options(64 * kMiB));
  const Extent a = MustAllocate(allocator, kMiB);
  EXPECT_TRUE(allocator.IsLive(a));
  EXPECT_FALSE(allocator.IsLive(Extent{a.offset, a.length / 2}));
  EXPECT_FALSE(allocator.IsLive(Extent{a.offset + 1, a.length}));
  allocator.Free(a);
  EXPECT_FALSE(allocator.IsLive(a));
}

TEST(ExtentAllocatorTest, ReserveRejectsMalformedExtents) {
  ExtentAllocator allocator(Options(64 * kMiB));
  EXPECT_CODE(allocator.Reserve(Extent{0, 0}), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(allocator.Reserve(Extent{4 * kKiB, kGranule}), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(allocator.Reserve(Extent{0, kGranule + 1}), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(allocator.Reserve(Extent{64 * kMiB - kGranule, 2 * kGranule}),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(allocator.Reserve(Extent{~uint64_t{0} - kGranule + 1, kGranule}),
              absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(allocator.Reserve(Extent{kGranule, ~uint64_t{0} - kGranule + 1}),
              absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(allocator.free_bytes(), 64 * kMiB);
  EXPECT_EQ(allocator.free_extents(), 1u);
}

TEST(ExtentAllocatorTest, ReserveCarvesExactlyThatExtent) {
  ExtentAllocator allocator(Options(64 * kMiB));
  const Extent middle{8 * kMiB, 2 * kMiB};
  ASSERT_OK(allocator.Reserve(middle));
  EXPECT_TRUE(allocator.IsLive(middle));
  EXPECT_EQ(allocator.free_bytes(), 62 * kMiB);
  EXPECT_EQ(allocator.free_extents(), 2u);
  EXPECT_CODE(allocator.Reserve(middle), absl::StatusCode::kAlreadyExists);
  // Overlaps on either side, inside, and around.
  EXPECT_CODE(allocator.Reserve(Extent{7 * kMiB, 2 * kMiB}), absl::StatusCode::kFailedPrecondition);
  EXPECT_CODE(allocator.Reserve(Extent{9 * kMiB, 2 * kMiB}), absl::StatusCode::kFailedPrecondition);
  EXPECT_CODE(allocator.Reserve(Extent{9 * kMiB, kGranule}), absl::StatusCode::kFailedPrecondition);
  EXPECT_CODE(allocator.Reserve(Extent{0, 16 * kMiB}), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(allocator.free_bytes(), 62 * kMiB);
  // The neighbours touching it are fine, at both ends of the range too.
  ASSERT_OK(allocator.Reserve(Extent{10 * kMiB, kGranule}));
  ASSERT_OK(allocator.Reserve(Extent{0, kGranule}));
  ASSERT_OK(allocator.Reserve(Extent{64 * kMiB - kGranule, kGranule}));
  EXPECT_EQ(allocator.live_extents(), 4u);
  // Allocate never hands out reserved bytes; Free takes reserved extents.
  for (int i = 0; i < 8; ++i) {
    const Extent e = MustAllocate(allocator, kMiB);
    EXPECT_TRUE(e.end() <= middle.offset || e.offset >= middle.end()) << e.offset;
    EXPECT_GT(e.offset, 0u);
  }
  allocator.Free(middle);
  EXPECT_FALSE(allocator.IsLive(middle));
  ASSERT_OK(allocator.Reserve(middle));
}

TEST(ExtentAllocatorTest, ReserveAfterAllocateAndFreeSeesTheirChanges) {
  ExtentAllocator allocator(Options(64 * kMiB));
  ASSERT_OK(allocator.Reserve(Extent{32 * kMiB, kMiB}));  // builds the ordered index
  const Extent a = MustAllocate(allocator, 4 * kMiB);
  const Extent inside_a{a.offset + kMiB, kMiB};
  EXPECT_CODE(allocator.Reserve(inside_a), absl::StatusCode::kFailedPrecondition);
  allocator.Free(a);
  ASSERT_OK(allocator.Reserve(inside_a));
  EXPECT_EQ(allocator.free_bytes(), 62 * kMiB);
  EXPECT_EQ(allocator.free_extents(), 3u);
  const Extent b = MustAllocate(allocator, 4 * kMiB);
  EXPECT_TRUE(b.end() <= inside_a.offset || b.offset >= inside_a.end());
}

TEST(ExtentAllocatorDeathTest, DoubleFreeAndForeignExtentsCrash) {
  ExtentAllocator allocator(Options(64 * kMiB));
  const Extent a = MustAllocate(allocator, kMiB);
  MustAllocate(allocator, kMiB);
  EXPECT_DEATH(allocator.Free(Extent{a.offset, a.length + kGranule}), "not live");
  EXPECT_DEATH(allocator.Free(Extent{a.offset + 512, a.length}), "not from this allocator");
  EXPECT_DEATH(allocator.Free(Extent{32 * kMiB, kMiB}), "not live");
  allocator.Free(a);
  EXPECT_DEATH(allocator.Free(a), "not live");
}

// A realistic skew over the whole range: mostly KV-cache-sized blobs (64 KiB - 32 MiB,
// log-uniform), a tenth log-uniform up to 1 GiB; byte counts not granule-aligned.
uint64_t RandomBlobBytes(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double max_log = unit(rng) < 0.9 ? std::log(32.0 * kMiB) : std::log(1.0 * kGiB);
  const double bytes =
      std::exp(std::log(64.0 * kKiB) + unit(rng) * (max_log - std::log(64.0 * kKiB)));
  return std::clamp<uint64_t>(static_cast<uint64_t>(bytes), 1, kGiB);
}

struct StressParams {
  uint64_t seed;
  uint64_t capacity;
  int ops;
};

class ExtentAllocatorStressTest : public ::testing::TestWithParam<StressParams> {};

// Checks that free and live extents tile [0, capacity) exactly, free extents are fully
// coalesced, and the allocator's summary figures agree with a brute-force recount.
void CheckFullInvariants(const ExtentAllocator& allocator, const std::map<uint64_t, uint64_t>& live,
                         uint64_t capacity) {
  std::vector<std::pair<Extent, bool>> all;  // (extent, is_free)
  uint64_t largest = 0;
  allocator.ForEachFreeExtent([&](const Extent& e) {
    all.push_back({e, true});
    largest = std::max(largest, e.length);
  });
  ASSERT_EQ(all.size(), allocator.free_extents());
  for (const auto& [offset, length] : live) all.push_back({Extent{offset, length}, false});
  std::sort(all.begin(), all.end(),
            [](const auto& a, const auto& b) { return a.first.offset < b.first.offset; });
  uint64_t cursor = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_EQ(all[i].first.offset, cursor) << "gap or overlap at extent " << i;
    ASSERT_GT(all[i].first.length, 0u);
    if (i > 0) {
      ASSERT_FALSE(all[i].second && all[i - 1].second) << "uncoalesced free pair";
    }
    cursor += all[i].first.length;
  }
  ASSERT_EQ(cursor, capacity);
  ASSERT_EQ(allocator.LargestFreeExtent(), largest);
  // UnusableFreeFraction against a recount, at a few request sizes.
  for (uint64_t request : {kGranule, 3 * kMiB + 1, 100 * kMiB, kGiB}) {
    uint64_t unusable = 0;
    allocator.ForEachFreeExtent([&](const Extent& e) {
      if (e.length < request) unusable += e.length;
    });
    const double expected =
        allocator.free_bytes() == 0 ? 0.0 : static_cast<double>(unusable) / allocator.free_bytes();
    ASSERT_DOUBLE_EQ(allocator.UnusableFreeFraction(request), expected) << request;
  }
}

TEST_P(ExtentAllocatorStressTest, RandomTraceKeepsExtentsDisjointAndEverythingReusable) {
  const StressParams p = GetParam();
  ExtentAllocator allocator(Options(p.capacity));
  std::mt19937_64 rng(p.seed);
  std::map<uint64_t, uint64_t> live;  // offset -> length
  std::vector<Extent> live_list;      // for picking a random victim
  uint64_t live_bytes = 0;
  uint64_t failures = 0;

  for (int op = 0; op < p.ops; ++op) {
    const bool allocate = live_list.empty() || rng() % 100 < 55;
    if (allocate) {
      const uint64_t bytes = RandomBlobBytes(rng);
      absl::StatusOr<Extent> extent = allocator.Allocate(bytes);
      if (!extent.ok()) {
        ASSERT_EQ(extent.status().code(), absl::StatusCode::kResourceExhausted);
        // It may fail only if no free extent is large enough.
        ASSERT_LT(allocator.LargestFreeExtent(), bytes);
        ++failures;
        // Make room so the trace keeps moving through high fill.
        const size_t victim = rng() % live_list.size();
        allocator.Free(live_list[victim]);
        live.erase(live_list[victim].offset);
        live_bytes -= live_list[victim].length;
        live_list[victim] = live_list.back();
        live_list.pop_back();
      } else {
        const Extent e = *extent;
        ASSERT_GE(e.length, bytes);
        ASSERT_LT(e.length - bytes, kGranule);
        ASSERT_EQ(e.offset % kGranule, 0u);
        ASSERT_LE(e.end(), p.capacity);
        // No overlap with the live neighbours on either side.
        const auto next = live.lower_bound(e.offset);
        if (next != live.end()) {
          ASSERT_LE(e.end(), next->first);
        }
        if (next != live.begin()) {
          ASSERT_LE(std::prev(next)->first + std::prev(next)->second, e.offset);
        }
        live.emplace(e.offset, e.length);
        live_list.push_back(e);
        live_bytes += e.length;
      }
    } else {
      const size_t victim = rng() % live_list.size();
      allocator.Free(live_list[victim]);
      live.erase(live_list[victim].offset);
      live_bytes -= live_list[victim].length;
      live_list[victim] = live_list.back();
      live_list.pop_back();
    }
    ASSERT_EQ(allocator.free_bytes() + live_bytes, p.capacity);
    ASSERT_EQ(allocator.live_extents(), live.size());
    if (op % 64 == 0) {
      CheckFullInvariants(allocator, live, p.capacity);
      if (HasFatalFailure()) return;
    }
  }
  CheckFullInvariants(allocator, live, p.capacity);
  EXPECT_EQ(allocator.Stats().failed_allocations, failures);

  // Everything freed is reusable: the free space is one extent again, and the whole
  // capacity can be allocated as max-size extents.
  std::shuffle(live_list.begin(), live_list.end(), rng);
  for (const Extent& e : live_list) allocator.Free(e);
  EXPECT_EQ(allocator.free_extents(), 1u);
  EXPECT_EQ(allocator.free_bytes(), p.capacity);
  EXPECT_EQ(allocator.LargestFreeExtent(), p.capacity);
  for (uint64_t i = 0; i < p.capacity / kGiB; ++i) {
    ASSERT_EQ(MustAllocate(allocator, kGiB).length, kGiB);
  }
  EXPECT_EQ(allocator.free_bytes(), p.capacity % kGiB);
  EXPECT_LE(allocator.free_extents(), 1u);
}

// A restart: the live extents of a worked allocator, reserved in random order in a fresh
// one, leave exactly the same free extents, and the two then allocate alike.
TEST(ExtentAllocatorTest, ReserveRebuildsTheLayoutAfterARestart) {
  constexpr uint64_t kCapacity = 8 * kGiB;
  ExtentAllocator before(Options(kCapacity));
  std::mt19937_64 rng(7);
  std::vector<Extent> live;
  for (int op = 0; op < 4000; ++op) {
    if (live.empty() || rng() % 100 < 60) {
      absl::StatusOr<Extent> e = before.Allocate(RandomBlobBytes(rng) / 8 + 1);
      if (e.ok()) live.push_back(*e);
    } else {
      const size_t victim = rng() % live.size();
      before.Free(live[victim]);
      live[victim] = live.back();
      live.pop_back();
    }
  }
  ASSERT_GT(before.free_extents(), 20u);
  std::shuffle(live.begin(), live.end(), rng);
  ExtentAllocator after(Options(kCapacity));
  for (const Extent& e : live) ASSERT_OK(after.Reserve(e));
  std::map<uint64_t, uint64_t> live_map;
  for (const Extent& e : live) live_map.emplace(e.offset, e.length);
  CheckFullInvariants(after, live_map, kCapacity);
  std::vector<std::pair<uint64_t, uint64_t>> free_before, free_after;
  before.ForEachFreeExtent([&](const Extent& e) { free_before.emplace_back(e.offset, e.length); });
  after.ForEachFreeExtent([&](const Extent& e) { free_after.emplace_back(e.offset, e.length); });
  std::sort(free_before.begin(), free_before.end());
  std::sort(free_after.begin(), free_after.end());
  EXPECT_EQ(free_before, free_after);
  EXPECT_EQ(after.live_bytes(), before.live_bytes());
  for (const Extent& e : live) after.Free(e);
  EXPECT_EQ(after.free_extents(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, ExtentAllocatorStressTest,
                         ::testing::Values(StressParams{1, 32 * kGiB, 30000},
                                           StressParams{2, 40 * kGiB, 30000},
                                           StressParams{3, 3 * kGiB + 5 * kGranule, 30000},
                                           StressParams{4, 512 * kGiB, 20000}));

}  // namespace
}  // namespace strata::tiering
