#include "strata/tiering/gdsf_policy.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/tiering/leaf_first_index.h"
#include "tiering/policy_test_util.h"

namespace strata::tiering {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

using ::strata::tiering::policy_test::Victims;

BlobTraits Span(uint32_t first_page, uint32_t pages, uint64_t bytes = 1000, BlobId parent = 0) {
  return BlobTraits{.bytes = bytes,
                    .first_page = first_page,
                    .pages = pages,
                    .page_tokens = 16,
                    .parent = parent};
}

TEST(GdsfPolicyTest, CostGrowsWithDepthAndTokens) {
  GdsfPolicy policy(GdsfOptions{.attention_tokens = 64});
  // 16 tokens at the root: 16 + (0 + 128) / 64 = 18.
  EXPECT_THAT(policy.CostPerByte(Span(0, 1, 1)), DoubleNear(18.0, 1e-9));
  // The same page after 4 pages (64 tokens): 16 + (64*16 + 128) / 64 = 34.
  EXPECT_THAT(policy.CostPerByte(Span(4, 1, 1)), DoubleNear(34.0, 1e-9));
  EXPECT_THAT(policy.CostPerByte(Span(4, 1, 2)), DoubleNear(17.0, 1e-9));
  // No shape: cost = bytes. Unknown page size: a page counts as a token.
  EXPECT_EQ(policy.CostPerByte(BlobTraits{.bytes = 77}), 1.0);
  EXPECT_THAT(policy.CostPerByte(BlobTraits{.bytes = 1, .pages = 2}),
              DoubleNear(2.0 + 2.0 / 64, 1e-9));
  GdsfPolicy flat(GdsfOptions{.attention_tokens = 64, .depth_aware = false});
  EXPECT_EQ(flat.CostPerByte(Span(0, 1, 1)), flat.CostPerByte(Span(100, 1, 1)));
}

TEST(GdsfPolicyTest, FrequentShallowAndLargeBlobsRankAsExpected) {
  GdsfPolicy policy;
  EXPECT_EQ(policy.name(), "gdsf");
  policy.OnInsert(1, Span(0, 1));
  policy.OnInsert(2, Span(0, 1));
  policy.OnInsert(3, Span(0, 1));
  policy.OnAccess(2);
  policy.OnAccess(2);
  // 1 and 3 tie on priority: the earlier touch goes first.
  EXPECT_THAT(Victims(policy), ElementsAre(1, 3, 2));
  policy.OnInsert(4, Span(40, 1));            // deep: costlier to rebuild, kept longer
  policy.OnInsert(5, Span(0, 1, 1000 * 10));  // 10x the bytes for the same cost: first out
  EXPECT_THAT(Victims(policy), ElementsAre(5, 1, 3, 4, 2));
  EXPECT_LT(*policy.Score(5), *policy.Score(1));
  EXPECT_EQ(policy.Score(99), std::nullopt);
}

TEST(GdsfPolicyTest, EvictionInOrderInflatesTheFloorButDeletesDoNot) {
  GdsfPolicy policy;
  policy.OnInsert(1, Span(0, 1));
  policy.OnInsert(2, Span(0, 1));
  policy.OnAccess(2);
  policy.OnAccess(2);
  const double first = *policy.Score(1);
  const double second = *policy.Score(2);
  policy.OnErase(2);  // not first in order: a delete, L stays
  EXPECT_EQ(policy.inflation(), 0.0);
  policy.OnInsert(2, Span(0, 1));
  policy.OnErase(1);  // first in order: an eviction
  EXPECT_EQ(policy.inflation(), first);
  // A blob inserted now starts above everything that aged.
  policy.OnInsert(3, Span(0, 1));
  EXPECT_GT(*policy.Score(3), *policy.Score(2));
  EXPECT_LT(*policy.Score(3), second + first);
  policy.OnErase(42);  // unknown: ignored
  EXPECT_EQ(policy.size(), 2u);
  EXPECT_EQ(policy.tracked_bytes(), 2000u);
}

TEST(GdsfPolicyTest, LeavesFirstAndTheCallerDecidesWhatIsEvictable) {
  GdsfPolicy policy;
  policy.OnInsert(1, Span(0, 1, 100));
  policy.OnInsert(2, Span(1, 1, 100, /*parent=*/1));
  for (int i = 0; i < 5; ++i) policy.OnAccess(2);  // the child is hot, but its parent stays
  EXPECT_THAT(Victims(policy), ElementsAre(2, 1));
  EXPECT_THAT(Victims(policy, 100, [](BlobId id) { return id == 1; }), ElementsAre(1));
  EXPECT_THAT(Victims(policy, 0), IsEmpty());
  policy.OnInsert(2, Span(1, 1, 300, /*parent=*/0));  // re-insert: size and parent change
  EXPECT_EQ(policy.tracked_bytes(), 400u);
  EXPECT_THAT(Victims(policy, 1), ElementsAre(1));
}

// The priority function alone: the mark (L at the touch) + touches x cost per byte.
TEST(GdsfPriorityTest, IsTheFloorPlusTouchesTimesCostPerByte) {
  const GdsfPolicy policy;
  const BlobTraits traits = Span(4, 2, 1000);
  const double per_byte = policy.CostPerByte(traits);
  BlobView blob{.id = 1, .traits = traits, .last_touch = 5, .touches = 1, .mark = 0};
  EXPECT_EQ(policy.Priority(blob), per_byte);
  blob.touches = 3;
  blob.mark = 2.5;
  EXPECT_DOUBLE_EQ(policy.Priority(blob), 2.5 + 3 * per_byte);
  blob.last_touch = 500;  // recency only through the floor
  EXPECT_DOUBLE_EQ(policy.Priority(blob), 2.5 + 3 * per_byte);
  blob.traits.first_page = 40;  // deeper: dearer to rebuild
  EXPECT_GT(policy.Priority(blob), 2.5 + 3 * per_byte);
}

}  // namespace
}  // namespace strata::tiering
