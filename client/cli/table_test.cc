#include "client/cli/table.h"

#include "gtest/gtest.h"

namespace strata::cli {
namespace {

TEST(TableTest, AlignsColumns) {
  Table table({{"KEY"}, {"PAGES", Align::kRight}, {"TIERS"}});
  table.AddRow({"abc", "4", "dram"});
  table.AddRow({"a", "1234567", "dram,ssd"});
  EXPECT_EQ(table.rows(), 2u);
  EXPECT_EQ(table.Render(),
            "KEY    PAGES  TIERS\n"
            "abc        4  dram\n"
            "a    1234567  dram,ssd\n");
}

TEST(TableTest, NoTrailingBlanksAndShortRows) {
  Table table({{"A"}, {"LONG HEADER"}});
  table.AddRow({"x"});
  table.AddRow({"yyyy", ""});
  EXPECT_EQ(table.Render(),
            "A     LONG HEADER\n"
            "x\n"
            "yyyy\n");
  Table right({{"N", Align::kRight}, {"COUNT", Align::kRight}});
  right.AddRow({"10", "3"});
  EXPECT_EQ(right.Render(),
            " N  COUNT\n"
            "10      3\n");
}

TEST(TableTest, HeaderOnly) {
  Table table({{"KEY"}, {"N", Align::kRight}});
  EXPECT_EQ(table.Render(), "KEY  N\n");
}

TEST(TableTest, KeyValues) {
  EXPECT_EQ(RenderKeyValues({{"key", "abc"}, {"pages indexed", "3 of 4"}, {"parent", ""}}),
            "key            abc\n"
            "pages indexed  3 of 4\n"
            "parent\n");
}

TEST(TableTest, FormatBytes) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.00 KiB");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes(10 * 1024), "10.0 KiB");
  EXPECT_EQ(FormatBytes(1000 * 1024), "1000 KiB");
  EXPECT_EQ(FormatBytes((1 << 20) - 1), "1.00 MiB");  // rounds up across the unit
  EXPECT_EQ(FormatBytes(64ull << 20), "64.0 MiB");
  EXPECT_EQ(FormatBytes(3ull << 30), "3.00 GiB");
  EXPECT_EQ(FormatBytes(1ull << 40), "1.00 TiB");
  EXPECT_EQ(FormatBytes(UINT64_MAX), "16.0 EiB");
}

TEST(TableTest, FormatCountDurationPercentTime) {
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(1000), "1,000");
  EXPECT_EQ(FormatCount(1234567), "1,234,567");
  EXPECT_EQ(FormatCount(UINT64_MAX), "18,446,744,073,709,551,615");

  EXPECT_EQ(FormatDurationShort(absl::Milliseconds(850)), "850ms");
  EXPECT_EQ(FormatDurationShort(absl::Seconds(12)), "12s");
  EXPECT_EQ(FormatDurationShort(absl::Seconds(185)), "3m05s");
  EXPECT_EQ(FormatDurationShort(absl::Hours(2) + absl::Minutes(14)), "2h14m");
  EXPECT_EQ(FormatDurationShort(absl::Hours(76)), "3d04h");
  EXPECT_EQ(FormatDurationShort(-absl::Seconds(2)), "-2s");

  EXPECT_EQ(FormatPercent(3, 8), "37.5%");
  EXPECT_EQ(FormatPercent(0, 5), "0.0%");
  EXPECT_EQ(FormatPercent(1, 0), "-");

  EXPECT_EQ(FormatLocalTime(absl::UnixEpoch()), "-");
  EXPECT_EQ(FormatLocalTime(absl::FromCivil(absl::CivilSecond(2026, 11, 29, 13, 37, 44),
                                            absl::LocalTimeZone())),
            "2026-11-29 13:37:44");
}

}  // namespace
}  // namespace strata::cli
