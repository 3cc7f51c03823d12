#include "strata/tiering/lru_policy.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/tiering/eviction_policy.h"
#include "strata/tiering/leaf_first_index.h"
#include "tiering/policy_test_util.h"

namespace strata::tiering {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

using ::strata::tiering::policy_test::Victims;

TEST(LruPolicyTest, EvictsInInsertionOrder) {
  LruPolicy lru;
  EXPECT_EQ(lru.name(), "lru");
  for (BlobId id = 1; id <= 4; ++id) lru.OnInsert(id, 10);
  EXPECT_EQ(lru.size(), 4u);
  EXPECT_EQ(lru.tracked_bytes(), 40u);
  EXPECT_THAT(Victims(lru, 1000), ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(lru.size(), 4u);  // collecting does not erase
}

TEST(LruPolicyTest, AccessMovesToTheMostRecentEnd) {
  LruPolicy lru;
  for (BlobId id = 1; id <= 4; ++id) lru.OnInsert(id, 10);
  lru.OnAccess(2);
  lru.OnAccess(1);
  EXPECT_THAT(Victims(lru, 1000), ElementsAre(3, 4, 2, 1));
  lru.OnAccess(99);  // unknown: ignored
  EXPECT_THAT(Victims(lru, 1000), ElementsAre(3, 4, 2, 1));
  lru.OnInsert(3, 25);  // re-insert: new size, most recent
  EXPECT_EQ(lru.tracked_bytes(), 55u);
  EXPECT_THAT(Victims(lru, 1000), ElementsAre(4, 2, 1, 3));
}

TEST(LruPolicyTest, EraseRemovesAndSlotsAreReused) {
  LruPolicy lru;
  for (BlobId id = 1; id <= 4; ++id) lru.OnInsert(id, 10);
  lru.OnErase(1);
  lru.OnErase(3);
  lru.OnErase(42);  // unknown: ignored
  EXPECT_EQ(lru.size(), 2u);
  EXPECT_EQ(lru.tracked_bytes(), 20u);
  EXPECT_THAT(Victims(lru, 1000), ElementsAre(2, 4));
  lru.OnInsert(5, 1);
  lru.OnInsert(6, 1);
  EXPECT_THAT(Victims(lru, 1000), ElementsAre(2, 4, 5, 6));
  for (BlobId id : {2, 4, 5, 6}) lru.OnErase(id);
  EXPECT_EQ(lru.size(), 0u);
  EXPECT_EQ(lru.tracked_bytes(), 0u);
  EXPECT_THAT(Victims(lru, 1000), IsEmpty());
  lru.OnInsert(7, 3);
  EXPECT_THAT(Victims(lru, 1), ElementsAre(7));
}

TEST(LruPolicyTest, SkipsWhatTheCallerCannotEvict) {
  LruPolicy lru;
  for (BlobId id = 1; id <= 6; ++id) lru.OnInsert(id, 10);
  auto odd_only = [](BlobId id) { return id % 2 == 1; };
  EXPECT_THAT(Victims(lru, 1000, odd_only), ElementsAre(1, 3, 5));
  EXPECT_THAT(Victims(lru, 1000, [](BlobId) { return false; }), IsEmpty());
}

TEST(LruPolicyTest, StopsOnceEnoughBytesAreCollected) {
  LruPolicy lru;
  lru.OnInsert(1, 100);
  lru.OnInsert(2, 50);
  lru.OnInsert(3, 70);
  lru.OnInsert(4, 10);
  EXPECT_THAT(Victims(lru, 0), IsEmpty());
  EXPECT_THAT(Victims(lru, 1), ElementsAre(1));
  EXPECT_THAT(Victims(lru, 100), ElementsAre(1));
  EXPECT_THAT(Victims(lru, 101), ElementsAre(1, 2));
  EXPECT_THAT(Victims(lru, 150), ElementsAre(1, 2));
  EXPECT_THAT(Victims(lru, 151), ElementsAre(1, 2, 3));
  // Not enough in total: everything evictable, and the caller sees it is short.
  EXPECT_THAT(Victims(lru, 10000), ElementsAre(1, 2, 3, 4));
  // Skipped blobs do not count towards the bytes.
  EXPECT_THAT(Victims(lru, 60, [](BlobId id) { return id != 1; }), ElementsAre(2, 3));
  // Victims are appended to what the vector already holds.
  std::vector<BlobId> victims = {99};
  lru.CollectVictims(
      1, [](BlobId) { return true; }, &victims);
  EXPECT_THAT(victims, ElementsAre(99, 1));
}

TEST(LruPolicyTest, TraitsBeyondBytesAreIgnoredAndScoreIsTheLastTouch) {
  LruPolicy lru;
  lru.OnInsert(1, BlobTraits{.bytes = 10, .first_page = 0, .pages = 4, .parent = 0});
  lru.OnInsert(2, BlobTraits{.bytes = 20, .first_page = 4, .pages = 4, .parent = 1});
  EXPECT_EQ(lru.tracked_bytes(), 30u);
  // A child is no reason to keep a parent: LRU leaves leaf-first to `evictable`.
  EXPECT_THAT(Victims(lru, 1000), ElementsAre(1, 2));
  EXPECT_EQ(lru.Score(42), std::nullopt);
  ASSERT_TRUE(lru.Score(1).has_value());
  EXPECT_LT(*lru.Score(1), *lru.Score(2));
  lru.OnAccess(1);
  EXPECT_GT(*lru.Score(1), *lru.Score(2));
  lru.OnErase(1);
  EXPECT_EQ(lru.Score(1), std::nullopt);
}

TEST(EvictionPolicyFactoryTest, KnowsEveryPolicyAndRejectsTheRest) {
  for (const char* name : {"lru", "branch-lru", "gdsf"}) {
    absl::StatusOr<std::unique_ptr<EvictionPolicy>> policy = MakeEvictionPolicy(name);
    ASSERT_TRUE(policy.ok()) << policy.status();
    EXPECT_EQ((*policy)->name(), name);
    (*policy)->OnInsert(1, 5);
    EXPECT_EQ((*policy)->size(), 1u);
    EXPECT_EQ((*policy)->tracked_bytes(), 5u);
  }
  EXPECT_EQ(MakeEvictionPolicy("belady").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeEvictionPolicy("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeEvictionPolicy("LRU").status().code(), absl::StatusCode::kInvalidArgument);
}

// The priority function alone: the last touch, nothing else.
TEST(LruPriorityTest, IsTheLastTouchAndNothingElse) {
  const LruPolicy lru;
  BlobView blob{.id = 7, .insert_tick = 3, .last_touch = 41, .touches = 9, .mark = 5};
  EXPECT_EQ(lru.Priority(blob), 41.0);
  blob.traits = BlobTraits{.bytes = 1 << 20, .first_page = 8, .pages = 4, .parent = 2};
  blob.touches = 1;
  blob.mark = -1;
  EXPECT_EQ(lru.Priority(blob), 41.0);
  blob.last_touch = 42;
  EXPECT_EQ(lru.Priority(blob), 42.0);
}

// LRU ranks by recency alone: a tracked child does not move its parent back.
TEST(LruPriorityTest, ParentsAreNotPutLast) {
  LruPolicy lru;
  lru.OnInsert(1, BlobTraits{.bytes = 10});
  lru.OnInsert(2, BlobTraits{.bytes = 10, .parent = 1});
  EXPECT_EQ(lru.index().Find(1)->tracked_children, 1u);
  EXPECT_THAT(Victims(lru, 1000), ElementsAre(1, 2));
}

}  // namespace
}  // namespace strata::tiering
