#include "client/cli/tier_format.h"

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "client/cli/blob_format.h"
#include "strata/base/status_test_macros.h"
#include "strata/testing/json.h"

namespace strata::cli {
namespace {

using strata::testing::AsBool;
using strata::testing::AsString;
using strata::testing::AsUint;
using strata::testing::ParseJson;

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

NodeTiers SampleTiers() {
  NodeTiers info;
  info.tiers = {{.tier = Tier::kDram,
                 .capacity_bytes = 64 << 20,
                 .used_bytes = 1 << 20,
                 .blobs = 2,
                 .hits = 5,
                 .misses = 1,
                 .evictions = 4,
                 .promotions = 0,
                 .demotions = 3,
                 .pages = 16},
                {.tier = Tier::kSsd, .capacity_bytes = uint64_t{1} << 30, .blobs = 3}};
  info.text = {.capacity_bytes = 64 << 20,
               .used_bytes = 2048,
               .blobs = 3,
               .drops = 7,
               .deletions = 2,
               .rebuilds = 4,
               .pages = 12};
  info.curves = {{.tier = Tier::kDram, .capacity_bytes = 64 << 20, .expected_hit_ratio = 0.61},
                 {.tier = Tier::kText, .capacity_bytes = 1 << 20, .expected_hit_ratio = 0.7}};
  info.rebuild = {
      .queued = 1, .in_flight = 2, .requested = 9, .completed = 4, .expired = 1, .dropped = 0};
  return info;
}

TEST(TierFormatTest, TableShowsByteTiersThenText) {
  const std::string table = RenderTiersTable(SampleTiers());
  const std::vector<std::string> lines = absl::StrSplit(table, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u) << table;
  EXPECT_THAT(lines[0], ::testing::StartsWith("TIER  CAPACITY"));
  EXPECT_THAT(lines[0], HasSubstr("BLOBS"));
  EXPECT_THAT(lines[1], ::testing::StartsWith("dram  64.0 MiB"));
  EXPECT_THAT(lines[1], HasSubstr("83.3%"));  // hits 5 of 6
  EXPECT_THAT(lines[2], ::testing::StartsWith("ssd   1.00 GiB"));
  EXPECT_THAT(lines[3], ::testing::StartsWith("text  64.0 MiB"));
  EXPECT_THAT(lines[3], HasSubstr("2.00 KiB"));
  EXPECT_THAT(lines[0], ::testing::EndsWith("DEMOTIONS  EXP.HIT%"));
  // DRAM: blobs 2, pages 16, ..., demotions 3, expected hit rate from its curve.
  const std::vector<std::string> dram = absl::StrSplit(lines[1], ' ', absl::SkipEmpty());
  ASSERT_EQ(dram.size(), 17u) << lines[1];  // sizes are two cells each ("64.0 MiB")
  EXPECT_EQ(std::vector<std::string>(dram.end() - 9, dram.end()),
            (std::vector<std::string>{"2", "16", "5", "1", "83.3%", "4", "0", "3", "61.0%"}))
      << lines[1];
  // SSD: no curve sent, "-".
  EXPECT_THAT(lines[2], ::testing::EndsWith("  -"));
  // TEXT: hits, misses, hit %, promotions, demotions have no meaning; evictions = deletions.
  const std::vector<std::string> cells = absl::StrSplit(lines[3], ' ', absl::SkipEmpty());
  ASSERT_EQ(cells.size(), 17u) << lines[3];
  EXPECT_EQ(std::vector<std::string>(cells.end() - 9, cells.end()),
            (std::vector<std::string>{"3", "12", "-", "-", "-", "2", "-", "-", "70.0%"}))
      << lines[3];
}

TEST(TierFormatTest, NoTextTierNoTextRow) {
  NodeTiers info = SampleTiers();
  info.text = {};
  const std::string table = RenderTiersTable(info);
  EXPECT_THAT(table, Not(HasSubstr("\ntext ")));
  EXPECT_THAT(TextTierLines(info.text),
              ::testing::ElementsAre(Pair("  none", HasSubstr("no text"))));
}

TEST(TierFormatTest, TextAndQueueLines) {
  const NodeTiers info = SampleTiers();
  const auto text = TextTierLines(info.text);
  EXPECT_THAT(text, ::testing::Contains(Pair("  blobs", "3")));
  EXPECT_THAT(text, ::testing::Contains(Pair("  drops", HasSubstr("7"))));
  EXPECT_THAT(text, ::testing::Contains(Pair("  deletions", "2")));
  EXPECT_THAT(text, ::testing::Contains(Pair("  rebuilds", HasSubstr("4"))));
  EXPECT_THAT(text, ::testing::Contains(Pair("  used", HasSubstr("2.00 KiB"))));
  EXPECT_THAT(RebuildQueueLines(info.rebuild),
              ::testing::ElementsAre(Pair("  queued", "1"), Pair("  in flight", "2"),
                                     Pair("  requested", "9"), Pair("  completed", "4"),
                                     Pair("  expired", "1"), Pair("  dropped", "0")));
}

TEST(TierFormatTest, Json) {
  const NodeTiers info = SampleTiers();
  Json json;
  json["text"] = TextTierJson(info.text);
  json["rebuild"] = RebuildQueueJson(info.rebuild);
  json["segment"] = SegmentJson({.blob = BlobKey{PrefixHash{1, 2}},
                                 .page_count = 1,
                                 .blob_pages = 1,
                                 .tier = Tier::kText,
                                 .tokens = {7, 8, 9, 10}});
  ASSERT_OK_AND_ASSIGN(nlohmann::json v, ParseJson(DumpJson(json)));
  EXPECT_EQ(AsUint(v["text"]["capacity_bytes"]), 64u << 20);
  EXPECT_EQ(AsUint(v["text"]["used_bytes"]), 2048u);
  EXPECT_EQ(AsUint(v["text"]["blobs"]), 3u);
  EXPECT_EQ(AsUint(v["text"]["drops"]), 7u);
  EXPECT_EQ(AsUint(v["text"]["deletions"]), 2u);
  EXPECT_EQ(AsUint(v["text"]["rebuilds"]), 4u);
  EXPECT_EQ(AsUint(v["text"]["pages"]), 12u);
  EXPECT_EQ(AsUint(v["rebuild"]["queued"]), 1u);
  EXPECT_EQ(AsUint(v["rebuild"]["in_flight"]), 2u);
  EXPECT_EQ(AsUint(v["rebuild"]["requested"]), 9u);
  EXPECT_EQ(AsUint(v["rebuild"]["completed"]), 4u);
  EXPECT_EQ(AsUint(v["rebuild"]["expired"]), 1u);
  EXPECT_EQ(AsUint(v["rebuild"]["dropped"]), 0u);
  EXPECT_EQ(AsString(v["segment"]["tier"]), "text");
  ASSERT_EQ(v["segment"]["tokens"].size(), 4u);
  EXPECT_EQ(AsUint(v["segment"]["tokens"][3]), 10u);
}

TEST(TierFormatTest, Summaries) {
  EXPECT_EQ(EvictSummary(Tier::kDram, uint64_t{2} << 20,
                         {.bytes_freed = 1 << 20, .blobs_demoted = 3, .blobs_dropped = 2}),
            "evicted 1.00 MiB of 2.00 MiB asked from dram: 3 blobs demoted to ssd, 2 dropped to "
            "text");
  EXPECT_EQ(EvictSummary(Tier::kSsd, std::nullopt, {.bytes_freed = 0}),
            "evicted 0 B of all that could go from ssd: 0 blobs dropped to text");
  EXPECT_EQ(EvictSummary(Tier::kText, uint64_t{100},
                         {.bytes_freed = 96, .pages_evicted = 12, .blobs_unlinked = 4}),
            "evicted 96 B of 100 B asked from text: 4 TEXT records deleted (12 index pages)");
  EXPECT_THAT(
      EvictSummary(
          Tier::kDram, std::nullopt,
          {.bytes_freed = 4096, .pages_evicted = 2, .blobs_unlinked = 1, .blobs_dropped = 1}),
      HasSubstr(", 1 left the index (2 pages)"));
  const BlobKey key{PrefixHash{1, 2}};
  EXPECT_EQ(
      RebuildRequestSummary(key, true, {.queued = 3, .already_queued = 1, .resident = 2}),
      "rebuild of " + key.ToHex() + " (with its prefix): 3 queued, 1 already queued, 2 resident");
  EXPECT_EQ(RebuildRequestSummary(key, false, {}),
            "rebuild of " + key.ToHex() + ": 0 queued, 0 already queued, 0 resident");
}

TEST(TierFormatTest, HasBytes) {
  EXPECT_FALSE(HasBytes({}));
  EXPECT_FALSE(HasBytes({Tier::kText}));
  EXPECT_TRUE(HasBytes({Tier::kDram}));
  EXPECT_TRUE(HasBytes({Tier::kSsd}));
}

}  // namespace
}  // namespace strata::cli
