// BeladyPolicy: its priority function (minus the next use recorded with the touch) and the
// order it gives over the shared LeafFirstIndex.
#include "strata/tiering/sim/belady_policy.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/tiering/leaf_first_index.h"

namespace strata::tiering::sim {
namespace {

using ::testing::ElementsAre;

std::vector<BlobId> BeladyOrder(const BeladyPolicy& policy) {
  std::vector<BlobId> victims;
  policy.CollectVictims(
      ~uint64_t{0}, [](BlobId) { return true; }, &victims);
  return victims;
}

TEST(BeladyPriorityTest, IsMinusTheNextUseAndNeverIsLowest) {
  const BeladyPolicy policy;
  EXPECT_EQ(policy.Priority(BlobView{.last_touch = 9, .touches = 4, .mark = 17}), -17.0);
  EXPECT_EQ(policy.Priority(BlobView{.mark = 0}), 0.0);
  const double never = policy.Priority(BlobView{.mark = static_cast<double>(BeladyPolicy::kNever)});
  EXPECT_LT(never, policy.Priority(BlobView{.mark = 9007199254740991.0}));  // 2^53 - 1
}

TEST(BeladyPriorityTest, FarthestNextUseFirstLeavesFirstTiesToTheOlder) {
  BeladyPolicy policy;
  policy.SetNextUse(5);
  policy.OnInsert(1, BlobTraits{.bytes = 1});
  policy.SetNextUse(BeladyPolicy::kNever);
  policy.OnInsert(2, BlobTraits{.bytes = 1, .parent = 1});
  policy.SetNextUse(9);
  policy.OnInsert(3, BlobTraits{.bytes = 1});
  policy.SetNextUse(BeladyPolicy::kNever);
  policy.OnInsert(4, BlobTraits{.bytes = 1});
  // Leaves 2, 3, 4: never (2, then the later 4), then 9; the parent 1 last.
  EXPECT_THAT(BeladyOrder(policy), ElementsAre(2, 4, 3, 1));
  EXPECT_EQ(*policy.Score(3), -9.0);
  policy.SetNextUse(2);
  policy.OnAccess(4);  // its next use is now close
  EXPECT_THAT(BeladyOrder(policy), ElementsAre(2, 3, 4, 1));
  policy.OnErase(2);
  EXPECT_THAT(BeladyOrder(policy), ElementsAre(3, 1, 4));  // 1 is a leaf now: next use 5
  EXPECT_EQ(policy.size(), 3u);
}

}  // namespace
}  // namespace strata::tiering::sim
