#include "strata/store/core/clock.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace strata::store::core {
namespace {

TEST(FakeClockTest, StartsAtFixedInstantAndMovesOnlyWhenTold) {
  FakeClock clock;
  EXPECT_EQ(clock.Now(), FakeClock::DefaultStart());
  EXPECT_EQ(clock.Now(), clock.Now());
  clock.Advance(absl::Seconds(5));
  EXPECT_EQ(clock.Now(), FakeClock::DefaultStart() + absl::Seconds(5));
  clock.Set(absl::UnixEpoch());
  EXPECT_EQ(clock.Now(), absl::UnixEpoch());
}

TEST(FakeClockTest, ConcurrentAdvancesAllCount) {
  FakeClock clock(absl::UnixEpoch());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        clock.Advance(absl::Milliseconds(1));
        (void)clock.Now();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(clock.Now(), absl::UnixEpoch() + absl::Seconds(4));
}

TEST(RealClockTest, FollowsAbslNow) {
  const absl::Time before = absl::Now();
  const absl::Time now = RealClock::Default()->Now();
  EXPECT_GE(now, before);
  EXPECT_LE(now, absl::Now());
  EXPECT_EQ(RealClock::Default(), RealClock::Default());
}

}  // namespace
}  // namespace strata::store::core
