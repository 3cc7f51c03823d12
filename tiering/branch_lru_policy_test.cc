#include "strata/tiering/branch_lru_policy.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/tiering/leaf_first_index.h"
#include "tiering/policy_test_util.h"

namespace strata::tiering {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

using ::strata::tiering::policy_test::Victims;

BlobTraits Blob(BlobId parent, uint64_t session = 0, uint64_t bytes = 10) {
  return BlobTraits{
      .bytes = bytes, .pages = 1, .page_tokens = 16, .parent = parent, .session_hint = session};
}

TEST(BranchLruPolicyTest, WithoutBranchesItIsLruOverLeavesThenParents) {
  BranchLruPolicy policy;
  EXPECT_EQ(policy.name(), "branch-lru");
  policy.OnInsert(1, Blob(0));
  policy.OnInsert(2, Blob(1));
  policy.OnInsert(3, Blob(2));
  policy.OnInsert(4, Blob(0));
  EXPECT_EQ(policy.size(), 4u);
  EXPECT_EQ(policy.tracked_bytes(), 40u);
  EXPECT_THAT(Victims(policy), ElementsAre(3, 4, 1, 2));
  policy.OnAccess(3);
  EXPECT_THAT(Victims(policy), ElementsAre(4, 3, 1, 2));
  policy.OnErase(4);
  policy.OnErase(3);
  EXPECT_THAT(Victims(policy), ElementsAre(2, 1));
  EXPECT_EQ(policy.abandoned_marks(), 0u);
}

TEST(BranchLruPolicyTest, RespectsEvictableBytesAndUnknownIds) {
  BranchLruPolicy policy;
  policy.OnInsert(1, Blob(0, 0, 100));
  policy.OnInsert(2, Blob(0, 0, 50));
  policy.OnInsert(3, Blob(0, 0, 70));
  EXPECT_THAT(Victims(policy, 0), IsEmpty());
  EXPECT_THAT(Victims(policy, 100), ElementsAre(1));
  EXPECT_THAT(Victims(policy, 101), ElementsAre(1, 2));
  EXPECT_THAT(Victims(policy, 60, [](BlobId id) { return id != 1; }), ElementsAre(2, 3));
  EXPECT_THAT(Victims(policy, 1000, [](BlobId) { return false; }), IsEmpty());
  policy.OnAccess(42);
  policy.OnErase(42);
  EXPECT_EQ(policy.Score(42), std::nullopt);
  EXPECT_EQ(policy.size(), 3u);
  policy.OnInsert(2, Blob(0, 0, 5));  // re-insert: new size, most recent
  EXPECT_EQ(policy.tracked_bytes(), 175u);
  EXPECT_THAT(Victims(policy), ElementsAre(1, 3, 2));
  for (BlobId id : {1, 2, 3}) policy.OnErase(id);
  EXPECT_EQ(policy.size(), 0u);
  EXPECT_EQ(policy.tracked_bytes(), 0u);
}

TEST(BranchLruPolicyTest, ASessionForkAbandonsTheBranchItLeft) {
  constexpr uint64_t kSession = 7;
  BranchLruPolicy policy;
  policy.OnInsert(100, Blob(0));  // some older unrelated blob
  // Turn 1: 1 -> 2 -> 3.
  for (BlobId id : {1, 2, 3}) policy.OnInsert(id, Blob(id - 1, kSession));
  // Turn 2 continues: reads 1..3, appends 4. Nothing abandoned.
  for (BlobId id : {1, 2, 3}) policy.OnAccess(id);
  policy.OnInsert(4, Blob(3, kSession));
  EXPECT_EQ(policy.abandoned_marks(), 0u);
  // Turn 3 forks after 2 (an edit of turn 2): reads 1, 2 and appends 5 under 2.
  policy.OnAccess(1);
  policy.OnAccess(2);
  policy.OnInsert(5, Blob(2, kSession));
  EXPECT_TRUE(policy.abandoned(3));
  EXPECT_TRUE(policy.abandoned(4));
  EXPECT_FALSE(policy.abandoned(2));
  EXPECT_FALSE(policy.abandoned(100));
  // The abandoned leaf goes first, even before the older unrelated blob; its parent
  // follows once it is a leaf.
  EXPECT_THAT(Victims(policy, 10), ElementsAre(4));
  policy.OnErase(4);
  EXPECT_THAT(Victims(policy, 20), ElementsAre(3, 100));
  ASSERT_TRUE(policy.Score(3).has_value());
  EXPECT_LT(*policy.Score(3), *policy.Score(100));
}

TEST(BranchLruPolicyTest, CompactionAbandonsTheOldChainButNotTheSharedPrompt) {
  constexpr uint64_t kSession = 9;
  BranchLruPolicy policy;
  policy.OnInsert(1, Blob(0, /*session=*/0));  // the shared system prompt
  policy.OnInsert(10, Blob(1, kSession));
  policy.OnInsert(11, Blob(10, kSession));
  // A second turn goes on from 11.
  for (BlobId id : {1, 10, 11}) policy.OnAccess(id);
  policy.OnInsert(12, Blob(11, kSession));
  // Compaction: the prompt, then a summary 20 under it.
  policy.OnAccess(1);
  policy.OnInsert(20, Blob(1, kSession));
  for (BlobId id : {10, 11, 12}) EXPECT_TRUE(policy.abandoned(id)) << id;
  EXPECT_FALSE(policy.abandoned(1));
  EXPECT_FALSE(policy.abandoned(20));
  EXPECT_THAT(Victims(policy, 10), ElementsAre(12));
}

TEST(BranchLruPolicyTest, AForkBeforeAnyContinuationIsNotTrusted) {
  BranchLruPolicy policy;
  policy.OnInsert(1, Blob(0, 4));
  policy.OnInsert(2, Blob(1, 4));
  policy.OnInsert(3, Blob(1, 4));  // "fork" with no history: could be another session
  EXPECT_FALSE(policy.abandoned(2));
}

TEST(BranchLruPolicyTest, AHintSharedByConcurrentSessionsNeverAbandons) {
  constexpr uint64_t kRootHint = 5;  // e.g. the sequence's root blob, shared by everyone
  BranchLruPolicy policy;
  policy.OnInsert(1, Blob(0, kRootHint));   // shared prompt R
  policy.OnInsert(10, Blob(1, kRootHint));  // A's first turn
  policy.OnAccess(1);
  policy.OnInsert(20, Blob(1, kRootHint));  // B's first turn; R's second child ever
  EXPECT_EQ(policy.abandoned_marks(), 1u);  // the one bypass misfire (A's blob 10)
  BlobId a_tail = 10;
  BlobId b_tail = 20;
  for (BlobId turn = 1; turn <= 10; ++turn) {
    // A and B alternate, each reading its whole chain and appending one blob.
    for (BlobId* tail : {&a_tail, &b_tail}) {
      policy.OnAccess(1);
      for (BlobId id = (*tail / 10) * 10; id <= *tail; ++id) policy.OnAccess(id);
      policy.OnInsert(*tail + 1, Blob(*tail, kRootHint));
      ++*tail;
    }
  }
  EXPECT_EQ(policy.abandoned_marks(), 1u);
  for (BlobId id = 10; id <= a_tail; ++id) EXPECT_FALSE(policy.abandoned(id)) << id;
  for (BlobId id = 20; id <= b_tail; ++id) EXPECT_FALSE(policy.abandoned(id)) << id;
}

TEST(BranchLruPolicyTest, AHintThatNamesABlobIsARootNotASession) {
  // store/core passes the sequence's root blob as the hint: shared by every session that
  // starts with the same prompt, so a "fork" under it is another session.
  BranchLruPolicy policy;
  policy.OnInsert(1, Blob(0, /*session=*/1));  // the root itself
  policy.OnInsert(2, Blob(1, 1));
  for (BlobId id : {1, 2}) policy.OnAccess(id);
  policy.OnInsert(3, Blob(2, 1));  // a continuation
  for (BlobId id : {1, 2}) policy.OnAccess(id);
  policy.OnInsert(4, Blob(1, 1));  // would be a trusted fork if 1 were a session id
  EXPECT_FALSE(policy.abandoned(3));
}

TEST(BranchLruPolicyTest, ASharedPrefixBroughtBackStaysShared) {
  BranchLruPolicy policy;
  policy.OnInsert(1, Blob(0));
  policy.OnInsert(2, Blob(1));
  policy.OnAccess(1);
  policy.OnInsert(3, Blob(1));  // 1 has had two children: shared
  for (BlobId id : {2, 3, 1}) policy.OnErase(id);
  policy.OnInsert(1, Blob(0));  // back under the same id
  policy.OnInsert(4, Blob(1));
  policy.OnAccess(1);
  policy.OnInsert(5, Blob(1));
  EXPECT_FALSE(policy.abandoned(4));
  EXPECT_EQ(policy.abandoned_marks(), 1u);  // only 2, the first time
}

TEST(BranchLruPolicyTest, OtherSessionsAndUnknownSessionsAreLeftAlone) {
  BranchLruPolicy policy;
  policy.OnInsert(1, Blob(0, 1));
  policy.OnInsert(2, Blob(1, 1));
  policy.OnInsert(3, Blob(0, 2));  // session 2's first blob: session 1 did not move
  policy.OnInsert(4, Blob(0, 0));
  policy.OnInsert(5, Blob(0, 0));  // no hint: never a fork
  EXPECT_EQ(policy.abandoned_marks(), 0u);
}

TEST(BranchLruPolicyTest, ATouchedTailMeansTheSessionIsStillOnThatPath) {
  BranchLruPolicy policy;
  policy.OnInsert(1, Blob(0, 3));
  policy.OnInsert(2, Blob(1, 3));
  // A later request re-read the whole chain, then the session starts a new chain at the
  // root: the tail was touched after its insert, so this is not read as a fork.
  policy.OnAccess(1);
  policy.OnAccess(2);
  policy.OnInsert(5, Blob(0, 3));
  EXPECT_FALSE(policy.abandoned(2));
}

TEST(BranchLruPolicyTest, ABypassedOnlyChildIsAbandonedWithoutHints) {
  BranchLruPolicy policy;
  policy.OnInsert(100, Blob(0));  // older unrelated blob
  // Turn 1: 1 -> 2 -> 3, where 3 is a partial tail the next turn will not reuse.
  for (BlobId id : {1, 2, 3}) policy.OnInsert(id, Blob(id - 1));
  // Turn 2 reads 1, 2 and continues with 4 under 2.
  policy.OnAccess(1);
  policy.OnAccess(2);
  policy.OnInsert(4, Blob(2));
  EXPECT_TRUE(policy.abandoned(3));
  EXPECT_EQ(policy.abandoned_marks(), 1u);
  EXPECT_THAT(Victims(policy), ElementsAre(3, 100, 4, 1, 2));
  // Reading it again revives it.
  policy.OnAccess(3);
  EXPECT_FALSE(policy.abandoned(3));
  EXPECT_THAT(Victims(policy, 10), ElementsAre(100));
}

TEST(BranchLruPolicyTest, ASharedPrefixMisfiresAtMostOnce) {
  BranchLruPolicy policy;
  policy.OnInsert(1, Blob(0));  // shared prompt
  policy.OnInsert(2, Blob(1));  // session A
  policy.OnInsert(3, Blob(2));
  policy.OnAccess(1);
  policy.OnInsert(4, Blob(1));  // session B: 1 had exactly one child, so A looks bypassed
  EXPECT_TRUE(policy.abandoned(2));
  EXPECT_TRUE(policy.abandoned(3));
  policy.OnAccess(1);
  policy.OnInsert(5, Blob(1));  // session C: 1 has had two children; nothing marked
  EXPECT_FALSE(policy.abandoned(4));
  EXPECT_EQ(policy.abandoned_marks(), 2u);
  // An erased newest child is forgotten: the only-child rule has nothing to follow.
  policy.OnInsert(6, Blob(4));
  policy.OnErase(6);
  policy.OnAccess(4);
  policy.OnInsert(7, Blob(4));
  EXPECT_EQ(policy.abandoned_marks(), 2u);
}

// The priority function alone: the last touch, 2^53 lower while abandoned (mark != 0).
TEST(BranchLruPriorityTest, AbandonedGoesBeforeAnyLiveBlob) {
  const BranchLruPolicy policy;
  BlobView live{.id = 1, .last_touch = 10, .touches = 3, .mark = 0};
  BlobView abandoned{.id = 2, .last_touch = 1000, .touches = 1, .mark = 1};
  EXPECT_EQ(policy.Priority(live), 10.0);
  EXPECT_EQ(policy.Priority(abandoned), 1000.0 - 9007199254740992.0);
  EXPECT_LT(policy.Priority(abandoned), policy.Priority(BlobView{.last_touch = 1}));
  abandoned.last_touch = 999;  // among abandoned blobs: least recent first
  EXPECT_LT(policy.Priority(abandoned), 1000.0 - 9007199254740992.0);
  live.traits = BlobTraits{.bytes = 99, .pages = 3, .session_hint = 5};
  EXPECT_EQ(policy.Priority(live), 10.0);  // shape and size do not count
}

}  // namespace
}  // namespace strata::tiering
