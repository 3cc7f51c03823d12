#include "strata/store/node/dram_sizing.h"

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::store::node {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

TEST(DefaultDramBytesTest, QuarterClampedAndAligned) {
  EXPECT_EQ(DefaultDramBytes(16 * kGiB), 4 * kGiB);
  EXPECT_EQ(DefaultDramBytes(100 * kGiB), 8 * kGiB);   // capped
  EXPECT_EQ(DefaultDramBytes(100 * kMiB), 64 * kMiB);  // floor
  EXPECT_EQ(DefaultDramBytes(0), 64 * kMiB);
  EXPECT_EQ(DefaultDramBytes(1001 * kMiB), 250 * kMiB);  // 250.25 MiB -> 2 MiB multiple
  EXPECT_EQ(DefaultDramBytes(1001 * kMiB) % (2 * kMiB), 0u);
}

TEST(MemAvailableTest, ParsesMeminfo) {
  const char* meminfo =
      "MemTotal:       24528960 kB\n"
      "MemFree:        22094632 kB\n"
      "MemAvailable:   23123456 kB\n"
      "Buffers:          123456 kB\n";
  ASSERT_OK_AND_ASSIGN(uint64_t bytes, MemAvailableBytes(meminfo));
  EXPECT_EQ(bytes, uint64_t{23123456} * 1024);
  EXPECT_CODE(MemAvailableBytes("MemTotal: 1 kB\n"), absl::StatusCode::kNotFound);
  EXPECT_CODE(MemAvailableBytes("MemAvailable: lots kB\n"), absl::StatusCode::kInvalidArgument);
}

TEST(MemAvailableTest, ThisMachineHasSome) {
  ASSERT_OK_AND_ASSIGN(uint64_t bytes, ReadMemAvailableBytes());
  EXPECT_GT(bytes, 0u);
}

}  // namespace
}  // namespace strata::store::node
