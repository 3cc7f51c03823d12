#include "strata/base/latency_histogram.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace strata::base {
namespace {

TEST(LatencyHistogramTest, EmptySnapshotHasBoundsAndNoCounts) {
  LatencyHistogram h;
  const HistogramSnapshot s = h.Snapshot();
  ASSERT_EQ(s.upper_bounds_seconds.size(), kLatencyBucketBoundsSeconds.size());
  ASSERT_EQ(s.counts.size(), s.upper_bounds_seconds.size() + 1);
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.sum_seconds, 0.0);
  EXPECT_EQ(EstimateQuantile(s, 0.5), 0.0);
  for (size_t i = 1; i < s.upper_bounds_seconds.size(); ++i) {
    EXPECT_LT(s.upper_bounds_seconds[i - 1], s.upper_bounds_seconds[i]);
  }
  EXPECT_DOUBLE_EQ(s.upper_bounds_seconds.front(), 25e-6);
  EXPECT_DOUBLE_EQ(s.upper_bounds_seconds.back(), 10.0);
}

TEST(LatencyHistogramTest, DurationsLandInTheirBuckets) {
  LatencyHistogram h;
  h.Record(absl::ZeroDuration());    // bucket 0 (<= 25 us)
  h.Record(absl::Microseconds(25));  // a bound is inside its bucket: bucket 0
  h.Record(absl::Microseconds(26));  // bucket 1 (<= 50 us)
  h.Record(absl::Milliseconds(3));   // (2.5 ms, 5 ms]: bucket 7
  h.Record(absl::Seconds(10));       // last finite bucket
  h.Record(absl::Seconds(11));       // +Inf
  h.Record(-absl::Seconds(1));       // negative: counted as zero
  const HistogramSnapshot s = h.Snapshot();
  EXPECT_EQ(s.count, 7u);
  EXPECT_EQ(s.counts[0], 3u);
  EXPECT_EQ(s.counts[1], 1u);
  EXPECT_EQ(s.counts[7], 1u);
  EXPECT_EQ(s.counts[kLatencyBucketBoundsSeconds.size() - 1], 1u);
  EXPECT_EQ(s.counts.back(), 1u);
  EXPECT_NEAR(s.sum_seconds, 25e-6 + 26e-6 + 3e-3 + 10 + 11, 1e-9);
}

TEST(LatencyHistogramTest, QuantilesInterpolateInsideTheBucket) {
  LatencyHistogram h;
  // 100 durations in (1 ms, 2.5 ms].
  for (int i = 0; i < 100; ++i) h.Record(absl::Milliseconds(2));
  const HistogramSnapshot s = h.Snapshot();
  EXPECT_NEAR(EstimateQuantile(s, 0.5), 1e-3 + 0.5 * 1.5e-3, 1e-12);
  EXPECT_NEAR(EstimateQuantile(s, 1.0), 2.5e-3, 1e-12);
  EXPECT_NEAR(EstimateQuantile(s, 0.0), 1e-3, 1e-12);
  EXPECT_NEAR(EstimateQuantile(s, 7.0), 2.5e-3, 1e-12);  // clamped to 1

  LatencyHistogram mixed;
  for (int i = 0; i < 90; ++i) mixed.Record(absl::Microseconds(10));  // bucket 0
  for (int i = 0; i < 10; ++i) mixed.Record(absl::Seconds(1));        // (500 ms, 1 s]
  const HistogramSnapshot m = mixed.Snapshot();
  EXPECT_LE(EstimateQuantile(m, 0.5), 25e-6);
  EXPECT_GT(EstimateQuantile(m, 0.99), 0.5);
  EXPECT_LE(EstimateQuantile(m, 0.99), 1.0);

  LatencyHistogram slow;
  slow.Record(absl::Seconds(60));
  EXPECT_DOUBLE_EQ(EstimateQuantile(slow.Snapshot(), 0.5), 10.0);  // +Inf: the last bound
}

TEST(LatencyHistogramTest, MergeAddsCountsAndSums) {
  LatencyHistogram a, b;
  a.Record(absl::Milliseconds(1));
  b.Record(absl::Milliseconds(1));
  b.Record(absl::Seconds(2));
  HistogramSnapshot merged;
  MergeInto(a.Snapshot(), &merged);
  MergeInto(b.Snapshot(), &merged);
  EXPECT_EQ(merged.count, 3u);
  EXPECT_EQ(merged.counts[5], 2u);  // (500 us, 1 ms]
  EXPECT_NEAR(merged.sum_seconds, 2.002, 1e-9);
}

TEST(LatencyHistogramTest, ConcurrentRecordsAreAllCounted) {
  LatencyHistogram h;
  constexpr int kThreads = 4, kEach = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&h, t] {
      for (int i = 0; i < kEach; ++i) h.Record(absl::Microseconds(100 * (t + 1)));
    });
  }
  for (std::thread& t : threads) t.join();
  const HistogramSnapshot s = h.Snapshot();
  EXPECT_EQ(s.count, uint64_t{kThreads} * kEach);
  EXPECT_NEAR(s.sum_seconds, kEach * (100e-6 + 200e-6 + 300e-6 + 400e-6), 1e-6);
}

}  // namespace
}  // namespace strata::base
