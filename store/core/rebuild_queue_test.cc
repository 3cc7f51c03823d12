// RebuildQueue on its own, over a BlobTable of hand-made TEXT records.
#include "strata/store/core/rebuild_queue.h"

#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::store::core {
namespace {

class RebuildQueueTest : public ::testing::Test {
 protected:
  // A linked TEXT record (no extents).
  BlobRecord* Text(tiering::BlobId id) {
    auto r = std::make_unique<BlobRecord>();
    r->id = id;
    r->key = radix::BlobKey{radix::PrefixHash{id, 7}};
    r->pages = 2;
    BlobRecord* record = table_.Add(std::move(r));
    table_.Link(record);
    record->state = BlobState::kLinked;
    return record;
  }
  std::vector<RebuildTask> Take(
      RebuildQueue& queue, uint32_t max, absl::Time now,
      absl::FunctionRef<bool(const BlobRecord&)> eligible = [](const BlobRecord&) {
        return true;
      }) {
    return queue.Take(
        max, now, table_, eligible, [this] { return ++next_id_; },
        [](const BlobRecord& r, RebuildTask* t) {
          t->key = r.key;
          t->pages = r.pages;
        });
  }

  BlobTable table_;
  uint64_t next_id_ = 100;
  const absl::Time t0_ = absl::FromUnixSeconds(1000);
};

TEST_F(RebuildQueueTest, QueuesTextOnlyOnceAndHandsOutOldestFirst) {
  RebuildQueue queue(RebuildQueueOptions{});
  BlobRecord* a = Text(1);
  BlobRecord* b = Text(2);
  BlobRecord* resident = Text(3);
  resident->extent = tiering::Extent{0, 4096};
  RebuildRequestReply reply;
  ASSERT_OK(queue.Queue(a, &reply));
  ASSERT_OK(queue.Queue(b, &reply));
  ASSERT_OK(queue.Queue(a, &reply));         // already queued
  ASSERT_OK(queue.Queue(resident, &reply));  // has bytes: nothing to do
  EXPECT_EQ(reply.queued, 2u);
  EXPECT_EQ(reply.already_queued, 1u);
  EXPECT_EQ(reply.resident, 1u);
  EXPECT_EQ(a->rebuild, RebuildStage::kQueued);
  EXPECT_EQ(queue.Stats().queued, 2u);

  const std::vector<RebuildTask> tasks = Take(queue, 10, t0_);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].key, a->key);
  EXPECT_EQ(tasks[1].key, b->key);
  EXPECT_EQ(tasks[0].task_id, 101u);
  EXPECT_EQ(tasks[0].deadline, t0_ + RebuildQueueOptions{}.task_ttl);
  EXPECT_EQ(tasks[0].pages, 2u);
  EXPECT_EQ(a->rebuild, RebuildStage::kInFlight);
  EXPECT_EQ(a->rebuild_attempts, 1u);
  RebuildQueueStats stats = queue.Stats();
  EXPECT_EQ(stats.queued, 0u);
  EXPECT_EQ(stats.in_flight, 2u);
  EXPECT_EQ(stats.requested, 2u);

  queue.End(a, /*filled=*/true);
  queue.End(b, /*filled=*/false);
  queue.End(b, /*filled=*/false);  // a second end is a no-op
  stats = queue.Stats();
  EXPECT_EQ(stats.in_flight, 0u);
  EXPECT_EQ(stats.completed, 1u);
  EXPECT_EQ(stats.dropped, 1u);
  EXPECT_EQ(a->rebuild, RebuildStage::kNone);
}

TEST_F(RebuildQueueTest, FullQueueIsResourceExhausted) {
  RebuildQueue queue(RebuildQueueOptions{.max_queue = 1});
  RebuildRequestReply reply;
  ASSERT_OK(queue.Queue(Text(1), &reply));
  BlobRecord* b = Text(2);
  EXPECT_CODE(queue.Queue(b, &reply), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(b->rebuild, RebuildStage::kNone);
  // In flight counts too.
  ASSERT_EQ(Take(queue, 1, t0_).size(), 1u);
  EXPECT_CODE(queue.Queue(b, &reply), absl::StatusCode::kResourceExhausted);
}

TEST_F(RebuildQueueTest, ExpiredTasksAreRequeuedFirstUntilTheAttemptsRunOut) {
  RebuildQueue queue(RebuildQueueOptions{.task_ttl = absl::Seconds(10), .max_attempts = 2});
  BlobRecord* a = Text(1);
  BlobRecord* b = Text(2);
  RebuildRequestReply reply;
  ASSERT_OK(queue.Queue(a, &reply));
  ASSERT_EQ(Take(queue, 1, t0_).size(), 1u);  // a in flight
  ASSERT_OK(queue.Queue(b, &reply));
  queue.Expire(t0_ + absl::Seconds(9), table_);  // not yet
  EXPECT_EQ(queue.Stats().in_flight, 1u);
  queue.Expire(t0_ + absl::Seconds(10), table_);
  EXPECT_EQ(queue.Stats().expired, 1u);
  EXPECT_EQ(a->rebuild, RebuildStage::kQueued);
  std::vector<RebuildTask> tasks = Take(queue, 1, t0_ + absl::Seconds(10));
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].key, a->key);  // ahead of b
  EXPECT_EQ(a->rebuild_attempts, 2u);
  // The second hand-out expires too: given up.
  queue.Expire(t0_ + absl::Seconds(30), table_);
  EXPECT_EQ(a->rebuild, RebuildStage::kNone);
  RebuildQueueStats stats = queue.Stats();
  EXPECT_EQ(stats.expired, 2u);
  EXPECT_EQ(stats.dropped, 1u);
  EXPECT_EQ(stats.queued, 1u);  // b
}

TEST_F(RebuildQueueTest, TakeSkipsBlobsThatGotBytesOrWentAway) {
  RebuildQueue queue(RebuildQueueOptions{});
  BlobRecord* a = Text(1);
  BlobRecord* b = Text(2);
  BlobRecord* c = Text(3);
  RebuildRequestReply reply;
  for (BlobRecord* r : {a, b, c}) ASSERT_OK(queue.Queue(r, &reply));
  a->extent = tiering::Extent{0, 4096};  // filled some other way
  queue.End(b, /*filled=*/false);        // went away (still queued in the deque)
  const std::vector<RebuildTask> tasks = Take(queue, 10, t0_);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].key, c->key);
  EXPECT_EQ(a->rebuild, RebuildStage::kNone);
  EXPECT_EQ(queue.Stats().dropped, 2u);
}

TEST_F(RebuildQueueTest, WaitReturnsWhenATaskIsQueuedOrOnStop) {
  RebuildQueue queue(RebuildQueueOptions{});
  // Nothing queued: waits out the deadline.
  const absl::Time start = absl::Now();
  EXPECT_FALSE(queue.WaitForQueued(start + absl::Milliseconds(20)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(20));

  BlobRecord* a = Text(1);
  std::thread producer([&] {
    absl::SleepFor(absl::Milliseconds(10));
    RebuildRequestReply reply;
    ASSERT_OK(queue.Queue(a, &reply));
  });
  EXPECT_TRUE(queue.WaitForQueued(absl::Now() + absl::Seconds(30)));
  producer.join();

  ASSERT_EQ(Take(queue, 1, t0_).size(), 1u);
  queue.Stop();
  EXPECT_TRUE(queue.stopped());
  const absl::Time before_stop_wait = absl::Now();
  EXPECT_FALSE(queue.WaitForQueued(absl::Now() + absl::Seconds(30)));
  EXPECT_LT(absl::Now() - before_stop_wait, absl::Seconds(10));
}

}  // namespace
}  // namespace strata::store::core

namespace strata::store::core {
namespace {

TEST_F(RebuildQueueTest, QueuePathQueuesParentsFirstAndSkipsTokenOnlyAncestors) {
  RebuildQueue queue(RebuildQueueOptions{});
  BlobRecord* root = Text(1);
  BlobRecord* gone = Text(2);  // unlinked: only its tokens are kept
  gone->parent_id = 1;
  table_.Unlink(gone);
  BlobRecord* leaf = Text(3);
  leaf->parent_id = 2;
  RebuildRequestReply alone;
  ASSERT_OK(queue.QueuePath(leaf, /*with_prefix=*/false, table_, &alone));
  EXPECT_EQ(alone.queued, 1u);
  EXPECT_EQ(root->rebuild, RebuildStage::kNone);
  queue.End(leaf, /*filled=*/false);
  RebuildQueue fresh(RebuildQueueOptions{});
  RebuildRequestReply path;
  ASSERT_OK(fresh.QueuePath(leaf, /*with_prefix=*/true, table_, &path));
  EXPECT_EQ(path.queued, 2u);
  EXPECT_EQ(gone->rebuild, RebuildStage::kNone);
  const std::vector<RebuildTask> tasks = Take(fresh, 10, t0_);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].key, root->key);  // the parent first
  EXPECT_EQ(tasks[1].key, leaf->key);
}

}  // namespace
}  // namespace strata::store::core
