#include "strata/tiering/mrc/miss_ratio_curve.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::tiering::mrc {
namespace {

using ::testing::ElementsAre;

MissRatioCurve Curve(std::vector<CurvePoint> points) {
  MissRatioCurve curve;
  curve.points = std::move(points);
  return curve;
}

TEST(MissRatioCurveTest, InterpolatesBetweenPointsFromTheOrigin) {
  const MissRatioCurve curve = Curve({{100, 0.2}, {200, 0.6}, {400, 0.7}});
  EXPECT_DOUBLE_EQ(curve.HitRatioAt(0), 0.0);
  EXPECT_DOUBLE_EQ(curve.HitRatioAt(50), 0.1);  // (0, 0) -> (100, 0.2)
  EXPECT_DOUBLE_EQ(curve.HitRatioAt(100), 0.2);
  EXPECT_DOUBLE_EQ(curve.HitRatioAt(150), 0.4);
  EXPECT_DOUBLE_EQ(curve.HitRatioAt(300), 0.65);
  EXPECT_DOUBLE_EQ(curve.HitRatioAt(400), 0.7);
  EXPECT_DOUBLE_EQ(curve.HitRatioAt(1 << 30), 0.7);  // the last value beyond
  EXPECT_DOUBLE_EQ(curve.MissRatioAt(150), 0.6);
}

TEST(MissRatioCurveTest, EmptyCurveIsZeroAndAPointAtZeroIsKept) {
  EXPECT_EQ(MissRatioCurve{}.HitRatioAt(12345), 0.0);
  const MissRatioCurve curve = Curve({{0, 0.0}, {10, 1.0}});
  EXPECT_DOUBLE_EQ(curve.HitRatioAt(0), 0.0);
  EXPECT_DOUBLE_EQ(curve.HitRatioAt(5), 0.5);
}

TEST(MissRatioCurveTest, CapacityGridIsEvenAndEndsAtTheMaximum) {
  EXPECT_THAT(CapacityGrid(100, 4), ElementsAre(25, 50, 75, 100));
  EXPECT_THAT(CapacityGrid(10, 3), ElementsAre(3, 6, 10));
  EXPECT_THAT(CapacityGrid(2, 4), ElementsAre(0, 1, 1, 2));
  const std::vector<uint64_t> huge = CapacityGrid(~uint64_t{0}, 7);  // no overflow
  ASSERT_EQ(huge.size(), 7u);
  EXPECT_EQ(huge.back(), ~uint64_t{0});
  EXPECT_LT(huge[5], huge[6]);
  EXPECT_TRUE(CapacityGrid(100, 0).empty());
}

TEST(MissRatioCurveTest, MeanAndMaxAbsoluteError) {
  const MissRatioCurve a = Curve({{100, 0.5}, {200, 0.5}});
  const MissRatioCurve b = Curve({{100, 0.4}, {200, 0.8}});
  const std::vector<uint64_t> grid = {100, 200};
  EXPECT_NEAR(MeanAbsoluteError(a, b, grid), (0.1 + 0.3) / 2, 1e-12);
  EXPECT_NEAR(MaxAbsoluteError(a, b, grid), 0.3, 1e-12);
  EXPECT_EQ(MeanAbsoluteError(a, a, grid), 0.0);
  EXPECT_EQ(MeanAbsoluteError(a, b, {}), 0.0);
}

}  // namespace
}  // namespace strata::tiering::mrc
