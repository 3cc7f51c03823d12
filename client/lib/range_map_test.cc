#include "client/lib/range_map.h"

#include <cstdint>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::client_internal {
namespace {

const void* At(uintptr_t address) { return reinterpret_cast<const void*>(address); }

TEST(RangeMapTest, FindsTheRangeHoldingAQuery) {
  RangeMap<int> map;
  ASSERT_OK(map.Insert(At(1000), 100, 1));
  ASSERT_OK(map.Insert(At(2000), 50, 2));
  EXPECT_EQ(map.Find(At(1000), 100), 1);
  EXPECT_EQ(map.Find(At(1050), 10), 1);
  EXPECT_EQ(map.Find(At(2049), 1), 2);
  EXPECT_FALSE(map.Find(At(1050), 51).has_value());  // runs past the end
  EXPECT_FALSE(map.Find(At(999), 2).has_value());
  EXPECT_FALSE(map.Find(At(1100), 1).has_value());
  EXPECT_FALSE(map.Find(At(10), 1).has_value());
}

TEST(RangeMapTest, RefusesOverlapsAndEmptyRanges) {
  RangeMap<int> map;
  ASSERT_OK(map.Insert(At(1000), 100, 1));
  EXPECT_CODE(map.Insert(At(1099), 10, 2), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(map.Insert(At(990), 11, 2), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(map.Insert(At(900), 1000, 2), absl::StatusCode::kInvalidArgument);
  EXPECT_CODE(map.Insert(At(5000), 0, 2), absl::StatusCode::kInvalidArgument);
  EXPECT_OK(map.Insert(At(990), 10, 3));  // touching is fine
  EXPECT_OK(map.Insert(At(1100), 10, 4));
  EXPECT_EQ(map.size(), 3u);
}

TEST(RangeMapTest, EraseByStart) {
  RangeMap<int> map;
  ASSERT_OK(map.Insert(At(1000), 100, 1));
  EXPECT_CODE(map.Erase(At(1001)), absl::StatusCode::kNotFound);
  EXPECT_OK(map.Erase(At(1000)));
  EXPECT_FALSE(map.Find(At(1000), 1).has_value());
  EXPECT_CODE(map.Erase(At(1000)), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace strata::client_internal
