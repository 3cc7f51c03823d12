#include "client/cli/capacity_format.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/testing/json.h"

namespace strata::cli {
namespace {

using strata::testing::AsBool;
using strata::testing::AsString;
using strata::testing::AsUint;
using strata::testing::ParseJson;

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}
std::vector<std::string> Cells(const std::string& line) {
  return absl::StrSplit(line, ' ', absl::SkipEmpty());
}

std::vector<LookupCounts> SampleLookups() {
  return {{.phase = LookupPhase::kPrefill,
           .lookups = 4,
           .queried_pages = 32,
           .dram_hit_pages = 10,
           .ssd_hit_pages = 1,
           .text_hit_pages = 1,
           .miss_pages = 20},
          {.phase = LookupPhase::kMidfill},
          {.phase = LookupPhase::kDecode, .lookups = 2, .queried_pages = 16, .dram_hit_pages = 16}};
}

TierCurve DramCurve() {
  return {.tier = Tier::kDram,
          .capacity_bytes = 64 << 20,
          .expected_hit_ratio = 0.61,
          .points = {{32 << 20, 0.4}, {64 << 20, 0.61}, {96 << 20, 0.74}, {128 << 20, 0.745}},
          .recommended = CurvePoint{96 << 20, 0.74},
          .advice = "DRAM 64 MiB -> 96 MiB raises the expected hit rate from 61.0% to 74.0%"};
}

TEST(CapacityFormatTest, FormatRatio) {
  EXPECT_EQ(FormatRatio(0.61), "61.0%");
  EXPECT_EQ(FormatRatio(1), "100.0%");
  EXPECT_EQ(FormatRatio(0), "0.0%");
  EXPECT_EQ(FormatRatio(std::nan("")), "-");
}

TEST(CapacityFormatTest, LookupsTableHasEveryPhaseAndATotal) {
  const std::vector<std::string> lines = Lines(RenderLookupsTable(SampleLookups()));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(Cells(lines[0]), (std::vector<std::string>{"PHASE", "LOOKUPS", "PAGES", "DRAM", "SSD",
                                                       "TEXT", "MISS", "HIT%"}));
  EXPECT_EQ(Cells(lines[1]),
            (std::vector<std::string>{"prefill", "4", "32", "10", "1", "1", "20", "37.5%"}));
  EXPECT_EQ(Cells(lines[2]), (std::vector<std::string>{"midfill", "0", "0", "0", "0", "0", "0",
                                                       "-"}));  // nothing queried
  EXPECT_EQ(Cells(lines[3]),
            (std::vector<std::string>{"decode", "2", "16", "16", "0", "0", "0", "100.0%"}));
  // 26 + 1 + 1 hits of 48 pages.
  EXPECT_EQ(Cells(lines[4]),
            (std::vector<std::string>{"total", "6", "48", "26", "1", "1", "20", "58.3%"}));
}

TEST(CapacityFormatTest, LookupsJson) {
  ASSERT_OK_AND_ASSIGN(nlohmann::json v, ParseJson(DumpJson(LookupsJson(SampleLookups()))));
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(AsString(v[0]["phase"]), "prefill");
  EXPECT_EQ(AsUint(v[0]["lookups"]), 4u);
  EXPECT_EQ(AsUint(v[0]["queried_pages"]), 32u);
  EXPECT_EQ(AsUint(v[0]["dram_hit_pages"]), 10u);
  EXPECT_EQ(AsUint(v[0]["ssd_hit_pages"]), 1u);
  EXPECT_EQ(AsUint(v[0]["text_hit_pages"]), 1u);
  EXPECT_EQ(AsUint(v[0]["miss_pages"]), 20u);
  EXPECT_DOUBLE_EQ(v[0]["hit_ratio"].get<double>(), 12.0 / 32);
  EXPECT_TRUE(v[1]["hit_ratio"].is_null());
  EXPECT_EQ(AsString(v[2]["phase"]), "decode");
}

TEST(CapacityFormatTest, CurveTableMarksCurrentAndRecommended) {
  const std::string text = RenderTierCurve(DramCurve(), 0);
  const std::vector<std::string> lines = Lines(text);
  ASSERT_EQ(lines.size(), 7u) << text;
  EXPECT_EQ(lines[0], "dram: 64.0 MiB now, expected hit rate 61.0%; recommended 96.0 MiB (74.0%)");
  EXPECT_THAT(lines[1], StartsWith("  CAPACITY  EXPECTED HIT%"));
  EXPECT_EQ(Cells(lines[2]), (std::vector<std::string>{"32.0", "MiB", "40.0%"}));
  EXPECT_EQ(Cells(lines[3]), (std::vector<std::string>{"64.0", "MiB", "61.0%", "<-", "current"}));
  EXPECT_EQ(Cells(lines[4]),
            (std::vector<std::string>{"96.0", "MiB", "74.0%", "<-", "recommended"}));
  EXPECT_EQ(Cells(lines[5]), (std::vector<std::string>{"128", "MiB", "74.5%"}));
  EXPECT_EQ(lines[6], "advice: " + DramCurve().advice);
}

TEST(CapacityFormatTest, CurveRowsAddedForCapacitiesNotOnTheCurve) {
  TierCurve curve = DramCurve();
  curve.capacity_bytes = 80 << 20;  // between two points
  curve.expected_hit_ratio = 0.7;
  curve.recommended = CurvePoint{80 << 20, 0.7};
  const std::vector<std::string> lines = Lines(RenderTierCurve(curve, 0));
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_EQ(Cells(lines[4]),
            (std::vector<std::string>{"80.0", "MiB", "70.0%", "<-", "current,", "recommended"}));
  EXPECT_THAT(lines[5], HasSubstr("96.0 MiB"));
  EXPECT_THAT(lines[5], Not(HasSubstr("<-")));
  // No recommendation, no advice: no "recommended" anywhere, no advice line.
  curve.recommended.reset();
  curve.advice.clear();
  const std::string bare = RenderTierCurve(curve, 0);
  EXPECT_THAT(bare, Not(HasSubstr("recommended")));
  EXPECT_THAT(bare, Not(HasSubstr("advice")));
}

TEST(CapacityFormatTest, TextCurveShowsTokenBytes) {
  const TierCurve curve{.tier = Tier::kText,
                        .capacity_bytes = 1 << 20,
                        .expected_hit_ratio = 0.5,
                        .points = {{1 << 20, 0.5}, {2 << 20, 0.6}}};
  const std::vector<std::string> lines = Lines(RenderTierCurve(curve, 0.25));
  ASSERT_GE(lines.size(), 4u);
  EXPECT_THAT(lines[1], HasSubstr("TOKEN BYTES"));
  // 1 MiB of KV at 0.25 token bytes per KV byte: 256 KiB of tokens.
  EXPECT_EQ(Cells(lines[2]),
            (std::vector<std::string>{"1.00", "MiB", "50.0%", "256", "KiB", "<-", "current"}));
  EXPECT_THAT(lines.back(), HasSubstr("KV-byte equivalents"));
  // Ratio unknown: no token column.
  EXPECT_THAT(RenderTierCurve(curve, 0), Not(HasSubstr("TOKEN BYTES")));
}

TEST(CapacityFormatTest, CurveAndMrcJson) {
  const MissRatioCurve mrc{.points = {{1024, 0.5}},
                           .accesses = 1000,
                           .sampled_accesses = 10,
                           .sample_rate = 0.01,
                           .working_set_bytes = 4096};
  Json json;
  json["mrc"] = MissRatioCurveJson(mrc);
  json["curve"] = TierCurveJson(DramCurve());
  TierCurve none = DramCurve();
  none.recommended.reset();
  json["none"] = TierCurveJson(none);
  ASSERT_OK_AND_ASSIGN(nlohmann::json v, ParseJson(DumpJson(json)));
  EXPECT_EQ(AsUint(v["mrc"]["accesses"]), 1000u);
  EXPECT_EQ(AsUint(v["mrc"]["sampled_accesses"]), 10u);
  EXPECT_DOUBLE_EQ(v["mrc"]["sample_rate"].get<double>(), 0.01);
  EXPECT_EQ(AsUint(v["mrc"]["working_set_bytes"]), 4096u);
  ASSERT_EQ(v["mrc"]["points"].size(), 1u);
  EXPECT_EQ(AsUint(v["mrc"]["points"][0]["capacity_bytes"]), 1024u);
  EXPECT_EQ(AsString(v["curve"]["tier"]), "dram");
  EXPECT_EQ(AsUint(v["curve"]["capacity_bytes"]), 64u << 20);
  EXPECT_DOUBLE_EQ(v["curve"]["expected_hit_ratio"].get<double>(), 0.61);
  EXPECT_EQ(AsUint(v["curve"]["recommended"]["capacity_bytes"]), 96u << 20);
  EXPECT_EQ(v["curve"]["points"].size(), 4u);
  EXPECT_THAT(AsString(v["curve"]["advice"]), StartsWith("DRAM 64 MiB"));
  EXPECT_TRUE(v["none"]["recommended"].is_null());
}

TEST(CapacityFormatTest, ChartHasOneSeriesAndMarkerPerTier) {
  const TierCurve dram = DramCurve();
  const TierCurve ssd{.tier = Tier::kSsd,
                      .capacity_bytes = 1 << 30,
                      .expected_hit_ratio = 0.8,
                      .points = {{1 << 29, 0.7}, {1 << 30, 0.8}}};
  const plot::LineChart chart = CapacityChart({&dram, &ssd});
  ASSERT_EQ(chart.series.size(), 2u);
  EXPECT_EQ(chart.series[0].name, "dram");
  ASSERT_EQ(chart.series[0].points.size(), 4u);
  EXPECT_EQ(chart.series[0].points[1], (std::pair<double, double>{64 << 20, 0.61}));
  EXPECT_EQ(chart.series[1].name, "ssd");
  ASSERT_EQ(chart.x_markers.size(), 2u);
  EXPECT_EQ(chart.x_markers[0], (std::pair<double, std::string>{64 << 20, "dram now"}));
  EXPECT_EQ(chart.x_markers[1], (std::pair<double, std::string>{1 << 30, "ssd now"}));
  EXPECT_EQ(chart.y_min, 0);
  EXPECT_EQ(chart.y_max, 1);
  EXPECT_EQ(chart.x_format(64 << 20), plot::FormatBytes(64 << 20));
  EXPECT_TRUE(chart.x_log);
}

TEST(CapacityFormatTest, MissRatioCurveSummary) {
  EXPECT_EQ(MissRatioCurveSummary({.accesses = 12345,
                                   .sampled_accesses = 123,
                                   .sample_rate = 0.01,
                                   .working_set_bytes = 80 << 20}),
            "12,345 page accesses, 123 sampled (rate 0.01), working set 80.0 MiB");
}

}  // namespace
}  // namespace strata::cli
