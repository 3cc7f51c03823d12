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
using Index = LeafFirstIndex<int>;

std::vector<BlobId> Order(const Index& index) {
  std::vector<BlobId> victims;
  index.CollectVictims(
      ~uint64_t{0}, [](BlobId) { return true; }, &victims);
  return victims;
}

TEST(LeafFirstIndexTest, LeavesComeFirstInKeyOrderThenTheRest) {
  Index index;
  index.Insert(1, 0, 10, /*key=*/5);
  index.Insert(2, 1, 10, /*key=*/1);
  index.Insert(3, 1, 10, /*key=*/9);
  index.Insert(4, 0, 10, /*key=*/7);
  // 1 has children; 2, 3 and 4 are leaves.
  EXPECT_THAT(Order(index), ElementsAre(2, 4, 3, 1));
  EXPECT_EQ(index.Find(1)->tracked_children, 2u);
  index.Erase(2);
  index.Erase(3);
  EXPECT_EQ(index.Find(1)->tracked_children, 0u);
  EXPECT_THAT(Order(index), ElementsAre(1, 4));
  EXPECT_EQ(index.size(), 2u);
  EXPECT_EQ(index.tracked_bytes(), 20u);
}

TEST(LeafFirstIndexTest, KeysBytesAndParentsCanChange) {
  Index index;
  index.Insert(1, 0, 10, 5);
  index.Insert(2, 0, 10, 6);
  index.Insert(3, 1, 10, 7);
  EXPECT_THAT(Order(index), ElementsAre(2, 3, 1));
  index.SetKey(2, 100);
  EXPECT_THAT(Order(index), ElementsAre(3, 2, 1));
  index.SetParent(3, 2);  // 1 becomes a leaf, 2 a parent
  EXPECT_THAT(Order(index), ElementsAre(1, 3, 2));
  index.SetBytes(3, 25);
  EXPECT_EQ(index.tracked_bytes(), 45u);
  // Updates of unknown ids and a second Insert of a tracked id are ignored.
  index.SetKey(9, 0);
  index.SetBytes(9, 1);
  index.SetParent(9, 1);
  index.Erase(9);
  index.Insert(3, 0, 1, -1);
  EXPECT_THAT(Order(index), ElementsAre(1, 3, 2));
  EXPECT_EQ(index.tracked_bytes(), 45u);
}

TEST(LeafFirstIndexTest, AParentErasedBeforeItsChildComesBackUncounted) {
  Index index;
  index.Insert(1, 0, 10, 1);
  index.Insert(2, 1, 10, 2);
  index.Erase(1);  // the child stays
  index.Insert(1, 0, 10, 3);
  EXPECT_EQ(index.Find(1)->tracked_children, 0u);
  index.Erase(2);  // must not decrement the new 1
  EXPECT_EQ(index.Find(1)->tracked_children, 0u);
  index.Insert(4, 1, 10, 4);
  EXPECT_EQ(index.Find(1)->tracked_children, 1u);
  EXPECT_THAT(Order(index), ElementsAre(4, 1));
  BlobId first = 0;
  ASSERT_NE(index.First(&first), nullptr);
  EXPECT_EQ(first, 4u);
}

TEST(LeafFirstIndexTest, CollectStopsAtTheBytesAndSkipsWhatIsNotEvictable) {
  Index index;
  index.Insert(1, 0, 100, 1);
  index.Insert(2, 0, 50, 2);
  index.Insert(3, 0, 70, 3);
  std::vector<BlobId> victims;
  index.CollectVictims(
      0, [](BlobId) { return true; }, &victims);
  EXPECT_THAT(victims, IsEmpty());
  index.CollectVictims(
      120, [](BlobId id) { return id != 2; }, &victims);
  EXPECT_THAT(victims, ElementsAre(1, 3));
}

// Random inserts and erases of a forest against a brute-force child count.
TEST(LeafFirstIndexTest, ChildCountsMatchABruteForceModel) {
  std::mt19937_64 rng(7);
  Index index;
  absl::flat_hash_map<BlobId, BlobId> parent_of;  // tracked id -> parent as inserted
  absl::flat_hash_map<BlobId, uint64_t> generation;
  absl::flat_hash_map<BlobId, uint64_t> linked_to;  // child -> generation of its parent
  uint64_t next_generation = 0;
  for (int step = 0; step < 5000; ++step) {
    const BlobId id = 1 + rng() % 200;
    if (!parent_of.contains(id)) {
      const BlobId parent = rng() % 3 == 0 ? 0 : 1 + rng() % 200;
      index.Insert(id, parent, 1, static_cast<int>(rng() % 50));
      parent_of[id] = parent;
      generation[id] = ++next_generation;
      if (parent != id && parent_of.contains(parent)) linked_to[id] = generation[parent];
    } else {
      index.Erase(id);
      parent_of.erase(id);
      linked_to.erase(id);
    }
    if (step % 97 != 0) continue;
    for (const auto& entry : parent_of) {
      const BlobId blob = entry.first;
      uint32_t children = 0;
      for (const auto& [child, parent_generation] : linked_to) {
        if (parent_of[child] == blob && parent_generation == generation[blob]) ++children;
      }
      ASSERT_EQ(index.Find(blob)->tracked_children, children) << "blob " << blob;
    }
    // The order lists every tracked blob once, leaves first.
    const std::vector<BlobId> order = Order(index);
    ASSERT_EQ(order.size(), parent_of.size());
    bool seen_parent = false;
    for (BlobId blob : order) {
      const bool has_child = index.Find(blob)->tracked_children > 0;
      ASSERT_FALSE(seen_parent && !has_child);
      seen_parent = seen_parent || has_child;
    }
  }
}

}  // namespace
}  // namespace strata::tiering
