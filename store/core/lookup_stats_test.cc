// LookupStats on its own: phase inference, page counts by tier, and the curve it feeds.
#include "strata/store/core/lookup_stats.h"

#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

#include "node_engine_test_util.h"
#include "strata/radix/prefix_hash.h"

namespace strata::store::core {
namespace {

using testing::kPageTokens;

std::vector<radix::TokenId> PageTokens(uint32_t pages, uint32_t seed) {
  std::vector<radix::TokenId> tokens(size_t{pages} * kPageTokens);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<radix::TokenId>(seed * 97 + i);
  return tokens;
}

// A reply of consecutive segments, one per (tier, pages).
MatchResult Reply(std::vector<std::pair<Tier, uint32_t>> segments) {
  MatchResult reply;
  for (const auto& [tier, pages] : segments) {
    Segment s;
    s.tier = tier;
    s.page_count = pages;
    s.seq_page_begin = reply.matched_pages;
    reply.matched_pages += pages;
    reply.segments.push_back(s);
  }
  return reply;
}

const LookupCounts& Phase(const NodeTiers& tiers, LookupPhase phase) {
  return tiers.lookups[LookupPhaseIndex(phase)];
}

class LookupStatsTest : public ::testing::Test {
 protected:
  const radix::Namespace ns_ = testing::SmallNamespace("t", "m", kPageTokens);
  const radix::PrefixHash h0_ = radix::NamespaceHash(ns_);
};

TEST_F(LookupStatsTest, InfersThePhaseFromTheReadablePages) {
  LookupStats stats(/*mrc_sampled_keys=*/0, /*curve_points=*/8);
  // No readable page (a TEXT hit is not readable): prefill.
  stats.Record(h0_, ns_, PageTokens(4, 1), LookupPhase::kUnspecified, Reply({{Tier::kText, 2}}));
  // All but the last page readable: decode (a partial page does not count).
  std::vector<radix::TokenId> decode = PageTokens(5, 2);
  decode.push_back(1);
  stats.Record(h0_, ns_, decode, LookupPhase::kUnspecified,
               Reply({{Tier::kDram, 3}, {Tier::kSsd, 1}}));
  // Readable pages, then two or more missing ones: midfill.
  stats.Record(h0_, ns_, PageTokens(6, 3), LookupPhase::kUnspecified,
               Reply({{Tier::kDram, 2}, {Tier::kText, 1}}));
  // A named phase is taken as given.
  stats.Record(h0_, ns_, PageTokens(2, 4), LookupPhase::kPrefill, Reply({{Tier::kDram, 2}}));

  NodeTiers tiers;
  stats.Fill(&tiers);
  EXPECT_EQ(tiers.engine.matches, 4u);
  EXPECT_EQ(tiers.engine.queried_pages, 4u + 5 + 6 + 2);
  EXPECT_EQ(tiers.engine.matched_pages, 2u + 4 + 3 + 2);
  const LookupCounts& prefill = Phase(tiers, LookupPhase::kPrefill);
  EXPECT_EQ(prefill.lookups, 2u);
  EXPECT_EQ(prefill.queried_pages, 6u);
  EXPECT_EQ(prefill.text_hit_pages, 2u);
  EXPECT_EQ(prefill.dram_hit_pages, 2u);
  EXPECT_EQ(prefill.miss_pages, 2u);
  const LookupCounts& decode_counts = Phase(tiers, LookupPhase::kDecode);
  EXPECT_EQ(decode_counts.lookups, 1u);
  EXPECT_EQ(decode_counts.dram_hit_pages, 3u);
  EXPECT_EQ(decode_counts.ssd_hit_pages, 1u);
  EXPECT_EQ(decode_counts.miss_pages, 1u);
  const LookupCounts& midfill = Phase(tiers, LookupPhase::kMidfill);
  EXPECT_EQ(midfill.lookups, 1u);
  EXPECT_EQ(midfill.dram_hit_pages, 2u);
  EXPECT_EQ(midfill.text_hit_pages, 1u);
  EXPECT_EQ(midfill.miss_pages, 3u);
  // No curve without sampled keys.
  EXPECT_TRUE(tiers.mrc.points.empty());
  EXPECT_TRUE(tiers.curves.empty());
  EXPECT_EQ(tiers.token_bytes_per_kv_byte, 0);
}

TEST_F(LookupStatsTest, FeedsTheCurveAndPlansTheTiers) {
  LookupStats stats(/*mrc_sampled_keys=*/4096, /*curve_points=*/8);
  NodeTiers empty;
  stats.Fill(&empty);
  EXPECT_TRUE(empty.mrc.points.empty());  // nothing sampled yet

  // Ten sequences of 8 pages, each looked up three times: re-reads hit at a capacity of
  // the working set (80 pages).
  for (int round = 0; round < 3; ++round) {
    for (uint32_t seq = 0; seq < 10; ++seq) {
      stats.Record(h0_, ns_, PageTokens(8, seq), LookupPhase::kPrefill, Reply({}));
    }
  }
  NodeTiers tiers;
  const uint64_t page_bytes = ns_.layout().BytesPerPage();
  tiers.tiers.push_back(
      report::TierStats{.tier = Tier::kDram, .capacity_bytes = 1000 * page_bytes});
  tiers.text.capacity_bytes = 1 << 20;
  stats.Fill(&tiers);
  ASSERT_FALSE(tiers.mrc.points.empty());
  EXPECT_EQ(tiers.mrc.accesses, 240u);
  EXPECT_EQ(tiers.mrc.working_set_bytes, 80 * page_bytes);
  EXPECT_NEAR(tiers.mrc.HitRatioAt(tiers.Find(Tier::kDram)->capacity_bytes), 2.0 / 3, 1e-9);
  EXPECT_DOUBLE_EQ(tiers.token_bytes_per_kv_byte,
                   static_cast<double>(kPageTokens * sizeof(radix::TokenId)) / page_bytes);
  ASSERT_FALSE(tiers.curves.empty());
  EXPECT_EQ(tiers.curves[0].tier, Tier::kDram);
  EXPECT_EQ(tiers.curves[0].capacity_bytes, tiers.Find(Tier::kDram)->capacity_bytes);
}

TEST_F(LookupStatsTest, CountsFromManyThreadsAddUp) {
  LookupStats stats(/*mrc_sampled_keys=*/256, /*curve_points=*/4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        stats.Record(h0_, ns_, PageTokens(3, t * 1000 + i), LookupPhase::kDecode,
                     Reply({{Tier::kDram, 2}}));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  NodeTiers tiers;
  stats.Fill(&tiers);
  EXPECT_EQ(tiers.engine.matches, 2000u);
  EXPECT_EQ(Phase(tiers, LookupPhase::kDecode).dram_hit_pages, 4000u);
  EXPECT_EQ(Phase(tiers, LookupPhase::kDecode).miss_pages, 2000u);
  EXPECT_EQ(tiers.mrc.accesses, 6000u);
}

}  // namespace
}  // namespace strata::store::core
