#include "strata/store/core/lock_hold.h"

#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace strata::store::core {
namespace {

TEST(LockHoldHistogramTest, EmptyIsZero) {
  LockHoldHistogram h;
  const LockHoldStats s = h.Snapshot();
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.p50_us, 0);
  EXPECT_EQ(s.max_us, 0);
}

TEST(LockHoldHistogramTest, QuantilesFallInTheRightBucket) {
  LockHoldHistogram h;
  for (int i = 0; i < 98; ++i) h.Record(1000);  // 1 us: bucket [512, 1024) ns
  h.Record(1'000'000);                          // 1 ms
  h.Record(-5);                                 // counts as 0
  const LockHoldStats s = h.Snapshot();
  EXPECT_EQ(s.count, 100u);
  EXPECT_GE(s.p50_us, 0.512);
  EXPECT_LE(s.p50_us, 1.024);
  EXPECT_LE(s.p99_us, 1.024);  // rank 99 of 100 is the last 1 us hold
  EXPECT_DOUBLE_EQ(s.max_us, 1000.0);
  EXPECT_NEAR(s.mean_us, (98 * 1.0 + 1000.0) / 100, 1e-9);
  EXPECT_GE(h.QuantileUs(1.0), 524.288);  // the 1 ms hold's bucket [2^19, 2^20) ns
  EXPECT_LE(h.QuantileUs(1.0), 1000.0);   // never past the max
}

TEST(LockHoldHistogramTest, TimedLocksRecordOnlyWhenGivenAHistogram) {
  absl::Mutex mu;
  LockHoldHistogram h;
  { TimedMutexLock lock(&mu, nullptr); }
  { TimedReaderMutexLock lock(&mu, nullptr); }
  EXPECT_EQ(h.Snapshot().count, 0u);
  {
    TimedMutexLock lock(&mu, &h);
    absl::SleepFor(absl::Milliseconds(2));
  }
  { TimedReaderMutexLock lock(&mu, &h); }
  const LockHoldStats s = h.Snapshot();
  EXPECT_EQ(s.count, 2u);
  EXPECT_GE(s.max_us, 2000.0);
}

TEST(LockHoldHistogramTest, PauseExcludesTheWait) {
  absl::Mutex mu;
  absl::CondVar cv;
  LockHoldHistogram h;
  {
    TimedMutexLock lock(&mu, &h);
    LockHoldPause pause;  // records the part before the wait as one hold
    cv.WaitWithTimeout(&mu, absl::Milliseconds(20));
  }  // and the part after it as another
  const LockHoldStats s = h.Snapshot();
  EXPECT_EQ(s.count, 2u);
  EXPECT_LT(s.max_us, 15000.0);  // the 20 ms wait is not a hold
  // A pause with no timed scope does nothing.
  { LockHoldPause pause; }
  EXPECT_EQ(h.Snapshot().count, 2u);
}

}  // namespace
}  // namespace strata::store::core
