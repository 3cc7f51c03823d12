#include "strata/base/byte_size.h"

#include <cmath>
#include <cstdint>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"

namespace strata::base {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

TEST(ParseBytesTest, UnitsAndSpaces) {
  EXPECT_EQ(*ParseBytes("0"), 0u);
  EXPECT_EQ(*ParseBytes("4096"), 4096u);
  EXPECT_EQ(*ParseBytes("1000000"), 1000000u);
  EXPECT_EQ(*ParseBytes("7B"), 7u);
  EXPECT_EQ(*ParseBytes("12b"), 12u);
  EXPECT_EQ(*ParseBytes("8GiB"), uint64_t{8} << 30);
  EXPECT_EQ(*ParseBytes("64MiB"), uint64_t{64} << 20);
  EXPECT_EQ(*ParseBytes("2gib"), uint64_t{2} << 30);
  EXPECT_EQ(*ParseBytes("2TiB"), uint64_t{2} << 40);
  EXPECT_EQ(*ParseBytes("3KB"), 3000u);
  EXPECT_EQ(*ParseBytes("1TB"), 1000000000000u);
  EXPECT_EQ(*ParseBytes("512 mib"), uint64_t{512} << 20);
  EXPECT_EQ(*ParseBytes("  1 MiB "), uint64_t{1} << 20);
  EXPECT_EQ(*ParseBytes("16777215TiB"), uint64_t{16777215} << 40);  // 2^64 - 2^40
}

TEST(ParseBytesTest, ErrorsAreInvalidArgumentAndSayWhy) {
  for (const char* bad : {"", "MiB", "GiB", "1.5GiB", "-1", "-1GiB", "1XB", "1PiB", "8 furlongs",
                          "16777216TiB" /* 2^64 */, "99999999999TiB", "99999999999999999999",
                          "99999999999999999999999"}) {
    EXPECT_CODE(ParseBytes(bad).status(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ParseBytes(" GiB").status().message(),
            "\"GiB\" is not a size (e.g. 8GiB, 512MiB, 1000000)");
  EXPECT_EQ(ParseBytes("8 furlongs").status().message(),
            "\"8 furlongs\": unknown unit \"furlongs\" (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)");
  EXPECT_EQ(ParseBytes("16777216TiB").status().message(), "\"16777216TiB\" is too large");
}

TEST(FormatBytesTest, ShortDropsTrailingZeros) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(1536 * 1024), "1.5 MiB");
  EXPECT_EQ(FormatBytes(64.0 * 1024 * 1024), "64 MiB");
  EXPECT_EQ(FormatBytes(1.25 * kGiB), "1.25 GiB");
  EXPECT_EQ(FormatBytes(2.0 * kGiB), "2 GiB");
  EXPECT_EQ(FormatBytes(12.0 * kGiB), "12 GiB");
  EXPECT_EQ(FormatBytes(1536.0 * kGiB), "1.5 TiB");
  EXPECT_EQ(FormatBytes(1024.0 * kGiB), "1 TiB");
  EXPECT_EQ(FormatBytes(1048575), "1 MiB");  // rounded before the unit is chosen
  EXPECT_EQ(FormatBytes(-4096), "-4 KiB");
  EXPECT_EQ(FormatBytes(std::nan("")), "nan");
  EXPECT_EQ(FormatBytes(INFINITY), "inf");
}

TEST(FormatBytesTest, ThreeDigitsForColumns) {
  const auto f = [](double b) { return FormatBytes(b, ByteStyle::kThreeDigits); };
  EXPECT_EQ(f(0), "0 B");
  EXPECT_EQ(f(1023), "1023 B");
  EXPECT_EQ(f(1024), "1.00 KiB");
  EXPECT_EQ(f(1536), "1.50 KiB");
  EXPECT_EQ(f(10 * 1024), "10.0 KiB");
  EXPECT_EQ(f(1000 * 1024), "1000 KiB");
  EXPECT_EQ(f((1 << 20) - 1), "1.00 MiB");  // rounds up across the unit
  EXPECT_EQ(f(64.0 * (1 << 20)), "64.0 MiB");
  EXPECT_EQ(f(3.0 * kGiB), "3.00 GiB");
  EXPECT_EQ(f(1024.0 * kGiB), "1.00 TiB");
  EXPECT_EQ(f(static_cast<double>(UINT64_MAX)), "16.0 EiB");
}

}  // namespace
}  // namespace strata::base
