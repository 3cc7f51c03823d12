// LeafFirstIndex, the one eviction structure: leaf-first order under a priority function,
// what is not evictable, erase of inner nodes, re-insert, sizes, and the child counts
// against a brute-force model. The checks RadixTree::Evict's tests made (leaf-first order,
// pinned blobs skipped, a parent a candidate only after its children, ties to the older,
// nothing for zero bytes) live here since that copy of the model was removed from radix.
#include "strata/tiering/leaf_first_index.h"

#include <cstdint>
#include <random>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::tiering {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Shape = LeafFirstIndex::Shape;

// Ranks by the mark: the tests set it like a key.
class MarkPriority final : public EvictionPriority {
 public:
  double Priority(const BlobView& blob) const override { return blob.mark; }
};
const MarkPriority kByMark;

// Ranks by the number of touches (LFU), ties to the older.
class TouchesPriority final : public EvictionPriority {
 public:
  double Priority(const BlobView& blob) const override { return static_cast<double>(blob.touches); }
};

BlobTraits Traits(BlobId parent, uint64_t bytes) {
  return BlobTraits{.bytes = bytes, .parent = parent};
}

std::vector<BlobId> Order(const LeafFirstIndex& index) {
  std::vector<BlobId> victims;
  index.CollectVictims(
      ~uint64_t{0}, [](BlobId) { return true; }, &victims);
  return victims;
}

TEST(LeafFirstIndexTest, LeavesComeFirstInPriorityOrderThenTheRest) {
  LeafFirstIndex index(&kByMark);
  EXPECT_TRUE(index.Insert(1, Traits(0, 10), /*mark=*/5));
  EXPECT_TRUE(index.Insert(2, Traits(1, 10), /*mark=*/1));
  EXPECT_TRUE(index.Insert(3, Traits(1, 10), /*mark=*/9));
  EXPECT_TRUE(index.Insert(4, Traits(0, 10), /*mark=*/7));
  // 1 has children; 2, 3 and 4 are leaves.
  EXPECT_THAT(Order(index), ElementsAre(2, 4, 3, 1));
  EXPECT_EQ(index.Find(1)->tracked_children, 2u);
  EXPECT_EQ(index.Find(1)->priority, 5);
  index.Erase(2);
  index.Erase(3);
  EXPECT_EQ(index.Find(1)->tracked_children, 0u);
  EXPECT_THAT(Order(index), ElementsAre(1, 4));
  EXPECT_EQ(index.size(), 2u);
  EXPECT_EQ(index.tracked_bytes(), 20u);
}

TEST(LeafFirstIndexTest, PriorityOnlyIgnoresTheShape) {
  LeafFirstIndex index(&kByMark, Shape::kPriorityOnly);
  index.Insert(1, Traits(0, 10), 5);
  index.Insert(2, Traits(1, 10), 9);
  index.Insert(3, Traits(1, 10), 1);
  EXPECT_EQ(index.Find(1)->tracked_children, 2u);
  EXPECT_THAT(Order(index), ElementsAre(3, 1, 2));
  index.Erase(3);
  index.Erase(2);
  EXPECT_EQ(index.Find(1)->tracked_children, 0u);
  EXPECT_THAT(Order(index), ElementsAre(1));
}

TEST(LeafFirstIndexTest, MarksBytesAndParentsCanChange) {
  LeafFirstIndex index(&kByMark);
  index.Insert(1, Traits(0, 10), 5);
  index.Insert(2, Traits(0, 10), 6);
  index.Insert(3, Traits(1, 10), 7);
  EXPECT_THAT(Order(index), ElementsAre(2, 3, 1));
  index.SetMark(2, 100);
  EXPECT_THAT(Order(index), ElementsAre(3, 2, 1));
  EXPECT_EQ(index.Find(2)->priority, 100);
  // A re-insert under another parent: 1 becomes a leaf, 2 a parent; new size; a touch.
  const uint64_t touch = index.Find(3)->last_touch;
  EXPECT_FALSE(index.Insert(3, Traits(2, 25), 7));
  EXPECT_THAT(Order(index), ElementsAre(1, 3, 2));
  EXPECT_EQ(index.tracked_bytes(), 45u);
  EXPECT_EQ(index.Find(3)->touches, 2u);
  EXPECT_GT(index.Find(3)->last_touch, touch);
  EXPECT_EQ(index.Find(3)->insert_tick, touch);
  EXPECT_EQ(index.Find(3)->traits.bytes, 25u);
  // A moved child is not a new child: 2's history of children is unchanged.
  EXPECT_EQ(index.Find(2)->children_ever, 0u);
  EXPECT_EQ(index.Find(1)->children_ever, 1u);
  // Updates of unknown ids are ignored.
  index.SetMark(9, 0);
  EXPECT_FALSE(index.Touch(9, 0));
  index.SetChildrenEver(9, 3);
  index.Erase(9);
  EXPECT_EQ(index.Find(9), nullptr);
  EXPECT_THAT(Order(index), ElementsAre(1, 3, 2));
  EXPECT_EQ(index.tracked_bytes(), 45u);
  EXPECT_EQ(index.size(), 3u);
}

TEST(LeafFirstIndexTest, TiesGoToTheBlobTouchedEarlier) {
  LeafFirstIndex index(&kByMark);
  for (BlobId id = 5; id >= 1; --id) index.Insert(id, Traits(0, 1), 0);
  EXPECT_THAT(Order(index), ElementsAre(5, 4, 3, 2, 1));
  EXPECT_TRUE(index.Touch(4, 0));
  EXPECT_THAT(Order(index), ElementsAre(5, 3, 2, 1, 4));
}

// Two policies over one history, each only a priority function: LFU and LRU.
TEST(LeafFirstIndexTest, APriorityFunctionIsAllAPolicyNeeds) {
  class LastTouchPriority final : public EvictionPriority {
   public:
    double Priority(const BlobView& blob) const override {
      return static_cast<double>(blob.last_touch);
    }
  };
  const TouchesPriority lfu;
  const LastTouchPriority lru;
  LeafFirstIndex by_touches(&lfu);
  LeafFirstIndex by_recency(&lru);
  for (LeafFirstIndex* index : {&by_touches, &by_recency}) {
    for (BlobId id : {1, 2, 3}) index->Insert(id, Traits(0, 1));
    // Touches: 1 x3, 3 x2, 2 x1; last touched: 1, then 3, then 2.
    for (int i = 0; i < 3; ++i) index->Touch(1);
    for (int i = 0; i < 2; ++i) index->Touch(3);
    index->Touch(2);
  }
  EXPECT_THAT(Order(by_touches), ElementsAre(2, 3, 1));
  EXPECT_EQ(by_touches.Find(1)->priority, 4);
  EXPECT_EQ(by_touches.First()->id, 2u);
  EXPECT_THAT(Order(by_recency), ElementsAre(1, 3, 2));
  // The view carries what the blob was inserted with.
  const BlobView* view = by_recency.Find(2);
  EXPECT_EQ(view->touches, 2u);
  EXPECT_GT(view->last_touch, view->insert_tick);
  EXPECT_EQ(view->traits.bytes, 1u);
  EXPECT_EQ(view->tracked_children, 0u);
}

TEST(LeafFirstIndexTest, AParentErasedBeforeItsChildComesBackUncounted) {
  LeafFirstIndex index(&kByMark);
  index.Insert(1, Traits(0, 10), 1);
  index.Insert(2, Traits(1, 10), 2);
  EXPECT_EQ(index.Find(1)->newest_child, 2u);
  index.Erase(1);  // an inner node goes; the child stays
  EXPECT_EQ(index.Find(2)->traits.parent, 1u);
  index.Insert(1, Traits(0, 10), 3);
  EXPECT_EQ(index.Find(1)->tracked_children, 0u);
  EXPECT_EQ(index.Find(1)->children_ever, 0u);
  index.Erase(2);  // must not decrement the new 1
  EXPECT_EQ(index.Find(1)->tracked_children, 0u);
  index.Insert(4, Traits(1, 10), 4);
  EXPECT_EQ(index.Find(1)->tracked_children, 1u);
  EXPECT_EQ(index.Find(1)->children_ever, 1u);
  EXPECT_EQ(index.Find(1)->newest_child, 4u);
  EXPECT_THAT(Order(index), ElementsAre(4, 1));
  ASSERT_NE(index.First(), nullptr);
  EXPECT_EQ(index.First()->id, 4u);
  index.Erase(4);  // the newest child goes: the parent forgets it
  EXPECT_EQ(index.Find(1)->newest_child, 0u);
  EXPECT_EQ(index.Find(1)->children_ever, 1u);
  index.SetChildrenEver(1, 2);
  EXPECT_EQ(index.Find(1)->children_ever, 2u);
  index.Erase(1);
  EXPECT_EQ(index.First(), nullptr);
  EXPECT_EQ(index.tracked_bytes(), 0u);
}

TEST(LeafFirstIndexTest, CollectStopsAtTheBytesAndSkipsWhatIsNotEvictable) {
  LeafFirstIndex index(&kByMark);
  index.Insert(1, Traits(0, 100), 1);
  index.Insert(2, Traits(0, 50), 2);
  index.Insert(3, Traits(0, 70), 3);
  std::vector<BlobId> victims;
  index.CollectVictims(
      0, [](BlobId) { return true; }, &victims);
  EXPECT_THAT(victims, IsEmpty());
  // 2 is pinned (not evictable): skipped, the walk goes on.
  index.CollectVictims(
      120, [](BlobId id) { return id != 2; }, &victims);
  EXPECT_THAT(victims, ElementsAre(1, 3));
}

// A leaf-first engine (evictable = no tracked child, not pinned) evicting everything: a
// parent goes only after its children, pinned blobs and their ancestors stay.
TEST(LeafFirstIndexTest, ALeafFirstEngineEvictsChildrenBeforeParents) {
  LeafFirstIndex index(&kByMark);
  //   1 ── 2 ── 3
  //   │    └─── 4 (pinned)
  //   └─ 5 ── 6
  index.Insert(1, Traits(0, 1), 1);
  index.Insert(2, Traits(1, 1), 9);
  index.Insert(3, Traits(2, 1), 2);
  index.Insert(4, Traits(2, 1), 3);
  index.Insert(5, Traits(1, 1), 0);
  index.Insert(6, Traits(5, 1), 8);
  const absl::flat_hash_set<BlobId> pinned = {4};
  std::vector<BlobId> evicted;
  for (;;) {
    std::vector<BlobId> victims;
    index.CollectVictims(
        1, [&](BlobId id) { return !pinned.contains(id) && index.Find(id)->tracked_children == 0; },
        &victims);
    if (victims.empty()) break;
    ASSERT_EQ(victims.size(), 1u);
    evicted.push_back(victims[0]);
    index.Erase(victims[0]);
  }
  EXPECT_THAT(evicted, ElementsAre(3, 6, 5));
  EXPECT_THAT(Order(index), ElementsAre(4, 1, 2));
  EXPECT_EQ(index.size(), 3u);
}

// Random inserts and erases of a forest against a brute-force child count.
TEST(LeafFirstIndexTest, ChildCountsMatchABruteForceModel) {
  std::mt19937_64 rng(7);
  LeafFirstIndex index(&kByMark);
  absl::flat_hash_map<BlobId, BlobId> parent_of;  // tracked id -> parent as inserted
  absl::flat_hash_map<BlobId, uint64_t> generation;
  absl::flat_hash_map<BlobId, uint64_t> linked_to;  // child -> generation of its parent
  uint64_t next_generation = 0;
  uint64_t bytes = 0;
  for (int step = 0; step < 5000; ++step) {
    const BlobId id = 1 + rng() % 200;
    if (!parent_of.contains(id)) {
      const BlobId parent = rng() % 3 == 0 ? 0 : 1 + rng() % 200;
      index.Insert(id, Traits(parent, id), static_cast<double>(rng() % 50));
      parent_of[id] = parent;
      generation[id] = ++next_generation;
      bytes += id;
      if (parent != id && parent_of.contains(parent)) linked_to[id] = generation[parent];
    } else {
      index.Erase(id);
      parent_of.erase(id);
      linked_to.erase(id);
      bytes -= id;
    }
    if (step % 97 != 0) continue;
    ASSERT_EQ(index.tracked_bytes(), bytes);
    for (const auto& entry : parent_of) {
      const BlobId blob = entry.first;
      uint32_t children = 0;
      for (const auto& [child, parent_generation] : linked_to) {
        if (parent_of[child] == blob && parent_generation == generation[blob]) ++children;
      }
      ASSERT_EQ(index.Find(blob)->tracked_children, children) << "blob " << blob;
    }
    // The order lists every tracked blob once, leaves first, each part by priority.
    const std::vector<BlobId> order = Order(index);
    ASSERT_EQ(order.size(), parent_of.size());
    bool seen_parent = false;
    double last = -1;
    for (BlobId blob : order) {
      const bool has_child = index.Find(blob)->tracked_children > 0;
      ASSERT_FALSE(seen_parent && !has_child);
      if (has_child && !seen_parent) last = -1;
      seen_parent = seen_parent || has_child;
      ASSERT_GE(index.Find(blob)->priority, last);
      last = index.Find(blob)->priority;
    }
  }
}

}  // namespace
}  // namespace strata::tiering
