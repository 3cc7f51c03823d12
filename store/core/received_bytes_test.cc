#include "strata/store/core/received_bytes.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::store::core {
namespace {

TEST(ReceivedBytesTest, MergesOverlappingAndAdjacentRanges) {
  ReceivedBytes r(100);
  EXPECT_FALSE(r.complete());
  ASSERT_OK(r.Add(10, 10));
  ASSERT_OK(r.Add(30, 10));
  EXPECT_EQ(r.covered(), 20u);
  EXPECT_EQ(r.intervals(), 2u);
  ASSERT_OK(r.Add(15, 20));  // bridges both
  EXPECT_EQ(r.covered(), 30u);
  EXPECT_EQ(r.intervals(), 1u);
  ASSERT_OK(r.Add(40, 60));  // adjacent: merges
  ASSERT_OK(r.Add(0, 10));
  EXPECT_EQ(r.intervals(), 1u);
  EXPECT_TRUE(r.complete());
  ASSERT_OK(r.Add(0, 100));  // repeat
  EXPECT_EQ(r.covered(), 100u);
}

TEST(ReceivedBytesTest, RejectsRangesOutside) {
  ReceivedBytes r(100);
  EXPECT_CODE(r.Add(90, 11), absl::StatusCode::kOutOfRange);
  EXPECT_CODE(r.Add(101, 0), absl::StatusCode::kOutOfRange);
  EXPECT_CODE(r.Add(1, UINT64_MAX), absl::StatusCode::kOutOfRange);
  EXPECT_OK(r.Add(100, 0));
  EXPECT_EQ(r.covered(), 0u);
}

TEST(ReceivedBytesTest, RandomRangesMatchABitmap) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; ++round) {
    const uint64_t size = 1 + rng() % 300;
    ReceivedBytes r(size);
    std::vector<bool> bits(size);
    for (int i = 0; i < 40; ++i) {
      const uint64_t off = rng() % size;
      const uint64_t len = rng() % (size - off + 1);
      ASSERT_OK(r.Add(off, len));
      for (uint64_t b = off; b < off + len; ++b) bits[b] = true;
      uint64_t expected = 0;
      for (bool b : bits) expected += b;
      ASSERT_EQ(r.covered(), expected);
    }
  }
}

}  // namespace
}  // namespace strata::store::core
