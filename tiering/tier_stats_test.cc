#include "strata/tiering/tier_stats.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

#include "strata/tiering/tier.h"

namespace strata::tiering {
namespace {

TEST(TierStatsTest, FreeBytesNeverUnderflows) {
  TierStats stats;
  stats.capacity_bytes = 100;
  stats.used_bytes = 30;
  EXPECT_EQ(stats.free_bytes(), 70u);
  stats.used_bytes = 130;
  EXPECT_EQ(stats.free_bytes(), 0u);
}

TEST(TierCountersTest, ConcurrentRecordsAreAllCounted) {
  TierCounters counters;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        counters.RecordHit();
        counters.RecordMiss(2);
        counters.RecordEviction();
        counters.RecordPromotion();
        counters.RecordDemotion(3);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const TierStats s = counters.Snapshot();
  EXPECT_EQ(s.hits, uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(s.misses, 2 * uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(s.evictions, uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(s.promotions, uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(s.demotions, 3 * uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(s.capacity_bytes, 0u);
}

}  // namespace
}  // namespace strata::tiering
