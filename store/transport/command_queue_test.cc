#include "store/transport/command_queue.h"

#include <thread>

#include <poll.h>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::store::transport {
namespace {

bool Readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, timeout_ms) == 1;
}

TEST(CommandQueueTest, RunsCommandsInOrder) {
  ASSERT_OK_AND_ASSIGN(auto queue, CommandQueue::Create());
  std::vector<int> seen;
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(queue->Push([&seen, i](bool cancelled) { seen.push_back(cancelled ? -1 : i); }));
  for (auto& c : queue->TakeAll()) std::move(c)(false);
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(queue->TakeAll().empty());
}

TEST(CommandQueueTest, PushWakesOnlyASleeper) {
  ASSERT_OK_AND_ASSIGN(auto queue, CommandQueue::Create());
  ASSERT_TRUE(queue->Push([](bool) {}));
  EXPECT_FALSE(Readable(queue->wake_fd(), 0)) << "awake consumer needs no eventfd write";
  EXPECT_FALSE(queue->PrepareToSleep()) << "a queued command forbids sleeping";
  queue->TakeAll();
  ASSERT_TRUE(queue->PrepareToSleep());
  std::thread pusher([&] { queue->Push([](bool) {}); });
  EXPECT_TRUE(Readable(queue->wake_fd(), 5000));
  pusher.join();
  queue->WokeUp();
  EXPECT_FALSE(Readable(queue->wake_fd(), 0)) << "WokeUp drains the eventfd";
  EXPECT_EQ(queue->TakeAll().size(), 1u);
}

TEST(CommandQueueTest, CloseRefusesPushesAndReturnsLeftovers) {
  ASSERT_OK_AND_ASSIGN(auto queue, CommandQueue::Create());
  ASSERT_TRUE(queue->Push([](bool) {}));
  EXPECT_EQ(queue->Close().size(), 1u);
  bool ran_cancelled = false;
  EXPECT_FALSE(queue->Push([&](bool cancelled) { ran_cancelled = cancelled; }));
  EXPECT_TRUE(ran_cancelled) << "a refused command runs cancelled on the pushing thread";
}

}  // namespace
}  // namespace strata::store::transport
