#include "strata/tiering/mrc/tier_plan.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::tiering::mrc {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kGiB = uint64_t{1} << 30;

MissRatioCurve HandMadeCurve() {
  MissRatioCurve curve;
  curve.points = {
      {1 * kGiB, 0.2}, {2 * kGiB, 0.5}, {4 * kGiB, 0.7}, {8 * kGiB, 0.75}, {16 * kGiB, 0.755}};
  curve.accesses = 1000;
  curve.sampled_accesses = 1000;
  curve.working_set_bytes = 16 * kGiB;
  return curve;
}

void ExpectMonotone(const TierCurve& view) {
  ASSERT_FALSE(view.points.empty());
  for (size_t i = 1; i < view.points.size(); ++i) {
    EXPECT_GT(view.points[i].capacity_bytes, view.points[i - 1].capacity_bytes);
    EXPECT_GE(view.points[i].hit_ratio, view.points[i - 1].hit_ratio);
  }
}

TEST(TierPlanTest, ViewsOfOneCurveThroughEachTier) {
  const std::vector<TierCurve> plan =
      PlanTiers(HandMadeCurve(),
                {.dram_bytes = 4 * kGiB, .ssd_bytes = 4 * kGiB, .text_kv_equivalent = 8 * kGiB});
  ASSERT_EQ(plan.size(), 3u);

  const TierCurve& dram = plan[0];
  EXPECT_EQ(dram.tier, report::Tier::kDram);
  EXPECT_EQ(dram.capacity_bytes, 4 * kGiB);
  EXPECT_DOUBLE_EQ(dram.expected_hit_ratio, 0.7);
  ExpectMonotone(dram);
  EXPECT_EQ(dram.points.back().capacity_bytes, 32 * kGiB);  // 2x the working set
  EXPECT_EQ(dram.points.size(), 33u);  // 0, then 1 GiB steps (which hold 4 GiB)
  EXPECT_EQ(dram.points.front(), (CurvePoint{0, 0.0}));
  // Best 0.755; within a point means >= 0.745, first reached on the grid at 8 GiB.
  EXPECT_EQ(dram.recommended, (CurvePoint{8 * kGiB, 0.75}));
  EXPECT_EQ(dram.advice, "DRAM 4 GiB -> 8 GiB raises the expected hit rate from 70.0% to 75.0%");

  const TierCurve& ssd = plan[1];
  EXPECT_EQ(ssd.tier, report::Tier::kSsd);
  ExpectMonotone(ssd);
  EXPECT_DOUBLE_EQ(ssd.expected_hit_ratio, 0.75);  // H(4 + 4 GiB)
  EXPECT_DOUBLE_EQ(ssd.points[0].hit_ratio, 0.7);  // no SSD: H(4 GiB)
  EXPECT_DOUBLE_EQ(ssd.points[1].hit_ratio, HandMadeCurve().HitRatioAt(5 * kGiB));
  EXPECT_EQ(ssd.recommended->capacity_bytes, 4 * kGiB);
  EXPECT_EQ(ssd.advice,
            "SSD 4 GiB is within 1 point of the best this curve reaches: expected hit rate "
            "through SSD 75.0%");

  const TierCurve& text = plan[2];
  EXPECT_EQ(text.tier, report::Tier::kText);
  ExpectMonotone(text);
  EXPECT_DOUBLE_EQ(text.expected_hit_ratio, 0.755);  // H(16 GiB)
  // H(8 GiB + 0) = 0.75 is already within a point of 0.755: no TEXT tier would do.
  EXPECT_EQ(text.points.front(), (CurvePoint{0, 0.75}));
  EXPECT_EQ(text.recommended, (CurvePoint{0, 0.75}));
  EXPECT_THAT(text.advice, HasSubstr("TEXT 8 GiB -> 0 B frees 8 GiB"));
  EXPECT_THAT(text.advice, HasSubstr("75.0% instead of 75.5%"));
}

TEST(TierPlanTest, MissingTiersGetNoViewAndAnEmptyCurveSaysSo) {
  const std::vector<TierCurve> only_dram = PlanTiers(HandMadeCurve(), {.dram_bytes = kGiB}, 8);
  ASSERT_EQ(only_dram.size(), 1u);
  // 8 grid points + the current capacity + 0.
  EXPECT_EQ(only_dram[0].points.size(), 10u);
  EXPECT_EQ(only_dram[0].points.front(), (CurvePoint{0, 0.0}));
  EXPECT_EQ(only_dram[0].recommended->capacity_bytes, 8 * kGiB);
  EXPECT_THAT(only_dram[0].advice, HasSubstr("DRAM 1 GiB -> 8 GiB raises"));
  EXPECT_THAT(only_dram[0].advice, HasSubstr("from 20.0% to 75.0%"));

  const std::vector<TierCurve> empty =
      PlanTiers(MissRatioCurve{}, {.dram_bytes = 8 * kGiB, .ssd_bytes = kGiB});
  ASSERT_EQ(empty.size(), 2u);
  EXPECT_EQ(empty[0].expected_hit_ratio, 0.0);
  EXPECT_EQ(empty[0].recommended, (CurvePoint{8 * kGiB, 0.0}));
  EXPECT_EQ(empty[0].advice, "DRAM 8 GiB: no accesses measured yet");
  ExpectMonotone(empty[1]);
}

}  // namespace
}  // namespace strata::tiering::mrc
