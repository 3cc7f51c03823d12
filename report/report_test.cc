#include <optional>
#include <vector>

#include "gtest/gtest.h"

#include "strata/report/curve.h"
#include "strata/report/lookup.h"
#include "strata/report/match.h"
#include "strata/report/node_tiers.h"
#include "strata/report/tier.h"

namespace strata::report {
namespace {

TEST(ReportTest, TierNamesAndWireNumbers) {
  EXPECT_EQ(TierName(Tier::kHbm), "hbm");
  EXPECT_EQ(TierName(Tier::kDram), "dram");
  EXPECT_EQ(TierName(Tier::kSsd), "ssd");
  EXPECT_EQ(TierName(Tier::kText), "text");
  EXPECT_EQ(TierName(static_cast<Tier>(9)), "unknown");
  EXPECT_EQ(static_cast<int>(Tier::kDram), 2);  // strata.v1.Tier numbers
}

TEST(ReportTest, LookupPhaseNames) {
  EXPECT_EQ(LookupPhaseName(LookupPhase::kUnspecified), "unspecified");
  EXPECT_EQ(LookupPhaseName(LookupPhase::kPrefill), "prefill");
  EXPECT_EQ(LookupPhaseName(LookupPhase::kMidfill), "midfill");
  EXPECT_EQ(LookupPhaseName(LookupPhase::kDecode), "decode");
  EXPECT_EQ(LookupPhaseName(static_cast<LookupPhase>(7)), "unknown");
}

TEST(ReportTest, CurveForFindsTheTiersCurve) {
  NodeTiers info;
  EXPECT_EQ(info.CurveFor(Tier::kDram), nullptr);
  info.curves.push_back(TierCurve{.tier = Tier::kSsd, .capacity_bytes = 7});
  info.curves.push_back(TierCurve{.tier = Tier::kDram, .capacity_bytes = 5});
  ASSERT_NE(info.CurveFor(Tier::kDram), nullptr);
  EXPECT_EQ(info.CurveFor(Tier::kDram)->capacity_bytes, 5u);
  EXPECT_EQ(info.CurveFor(Tier::kSsd)->capacity_bytes, 7u);
  EXPECT_EQ(info.CurveFor(Tier::kText), nullptr);
  const LookupCounts lookups{.dram_hit_pages = 1, .ssd_hit_pages = 2, .text_hit_pages = 4};
  EXPECT_EQ(lookups.HitPages(), 7u);
}

TEST(MatchResultTest, ReadablePagesEndAtTheFirstTextSegment) {
  const radix::BlobKey a{radix::PrefixHash{1, 1}}, b{radix::PrefixHash{2, 2}},
      c{radix::PrefixHash{3, 3}};
  MatchResult match;
  EXPECT_EQ(match.ReadablePages(), 0u);
  EXPECT_TRUE(match.TextSegments().empty());
  match.matched_pages = 9;
  match.segments = {{a, 0, 3, 0, 3, Tier::kDram},
                    {b, 0, 2, 3, 4, Tier::kSsd},
                    {c, 1, 2, 5, 3, Tier::kText, {7, 8}},
                    {a, 0, 2, 7, 2, Tier::kDram}};
  // DRAM and SSD pages [0, 5) are readable; the TEXT segment ends the readable prefix even
  // though DRAM pages follow it.
  EXPECT_EQ(match.ReadablePages(), 5u);
  const std::vector<Segment> text = match.TextSegments();
  ASSERT_EQ(text.size(), 1u);
  EXPECT_EQ(text[0].blob, c);
  EXPECT_EQ(text[0].tokens, (std::vector<radix::TokenId>{7, 8}));
  // No TEXT: every matched page.
  match.segments[2].tier = Tier::kDram;
  match.segments[2].tokens.clear();
  EXPECT_EQ(match.ReadablePages(), 9u);
  // TEXT first: nothing readable.
  match.segments[0].tier = Tier::kText;
  EXPECT_EQ(match.ReadablePages(), 0u);
  // Never more than matched_pages, and a gap ends the readable prefix.
  match.segments = {{a, 0, 3, 0, 3, Tier::kDram}, {b, 0, 2, 4, 2, Tier::kDram}};
  match.matched_pages = 2;
  EXPECT_EQ(match.ReadablePages(), 2u);
  match.matched_pages = 6;
  EXPECT_EQ(match.ReadablePages(), 3u);
}

TEST(ReportTest, TierNamesRoundTripAndOrderFastestFirst) {
  for (const Tier tier : kTiers) EXPECT_EQ(TierFromName(TierName(tier)), tier);
  EXPECT_EQ(TierFromName("DRAM"), std::nullopt);
  EXPECT_EQ(TierFromName(""), std::nullopt);
  EXPECT_LT(Tier::kHbm, Tier::kDram);
  EXPECT_LT(Tier::kDram, Tier::kSsd);
  EXPECT_LT(Tier::kSsd, Tier::kText);
  EXPECT_TRUE(IsByteTier(Tier::kSsd));
  EXPECT_FALSE(IsByteTier(Tier::kText));
  EXPECT_TRUE(IsTierValue(4));
  EXPECT_FALSE(IsTierValue(0));
  EXPECT_FALSE(IsTierValue(5));
}

TEST(ReportTest, FindAndLookupsForReturnWhatTheNodeReported) {
  NodeTiers tiers;
  EXPECT_EQ(tiers.Find(Tier::kDram), nullptr);
  tiers.tiers.push_back(TierStats{.tier = Tier::kDram, .capacity_bytes = 8});
  tiers.tiers.push_back(TierStats{.tier = Tier::kSsd, .capacity_bytes = 16});
  ASSERT_NE(tiers.Find(Tier::kSsd), nullptr);
  EXPECT_EQ(tiers.Find(Tier::kSsd)->capacity_bytes, 16u);
  EXPECT_EQ(tiers.Find(Tier::kHbm), nullptr);
  tiers.lookups.push_back(LookupCounts{.phase = LookupPhase::kDecode, .lookups = 3});
  ASSERT_NE(tiers.LookupsFor(LookupPhase::kDecode), nullptr);
  EXPECT_EQ(tiers.LookupsFor(LookupPhase::kDecode)->lookups, 3u);
  EXPECT_EQ(tiers.LookupsFor(LookupPhase::kPrefill), nullptr);
  EXPECT_EQ(LookupPhaseIndex(LookupPhase::kPrefill), 0);
  EXPECT_EQ(kCountedPhases[LookupPhaseIndex(LookupPhase::kDecode)], LookupPhase::kDecode);
}

}  // namespace
}  // namespace strata::report
