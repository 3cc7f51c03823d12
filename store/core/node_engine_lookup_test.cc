// NodeEngine: Match's page hits and misses by phase and tier, phase inference, pages per
// tier, and the live miss-ratio curve fed from Match.
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

#include "node_engine_test_util.h"
#include "strata/base/status_test_macros.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::core {
namespace {

using testing::BlobContent;
using testing::MakeBlob;
using testing::MakeTokens;
using testing::PutBlob;
using testing::SmallNamespace;
using testing::SmallOptions;

class NodeEngineLookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NodeEngineOptions options = SmallOptions(&clock_);
    options.text_bytes = 1 << 20;  // keep TEXT so a dropped blob still matches
    engine_ = NodeEngine::Create(options).value();
  }
  const LookupCounts& Counts(const NodeTiers& tiers, LookupPhase phase) {
    return tiers.lookups[LookupPhaseIndex(phase)];
  }

  FakeClock clock_;
  std::unique_ptr<NodeEngine> engine_;
  const radix::Namespace ns_ = SmallNamespace();
};

TEST_F(NodeEngineLookupTest, EveryPhaseIsListedInOrderBeforeAnyLookup) {
  const NodeTiers tiers = engine_->Tiers();
  ASSERT_EQ(tiers.lookups.size(), 3u);
  EXPECT_EQ(tiers.lookups[0].phase, LookupPhase::kPrefill);
  EXPECT_EQ(tiers.lookups[1].phase, LookupPhase::kMidfill);
  EXPECT_EQ(tiers.lookups[2].phase, LookupPhase::kDecode);
  EXPECT_EQ(tiers.lookups[0].lookups, 0u);
  ASSERT_EQ(tiers.tiers.size(), 1u);  // DRAM only: this node has no SSD
  EXPECT_EQ(tiers.tiers[0].tier, Tier::kDram);
}

TEST_F(NodeEngineLookupTest, PhasesAreInferredFromTheAnswer) {
  const BlobContent a = MakeBlob(ns_, 4, 1);
  ASSERT_OK_AND_ASSIGN(CommitPutReply ca, PutBlob(*engine_, ns_, std::nullopt, a));
  (void)ca;
  // Nothing of these 3 pages is cached: prefill, 3 misses.
  ASSERT_OK(engine_->Match(ns_, MakeTokens(3, 99)).status());
  // a's 4 pages plus 1 new page (and a partial one): every whole page but the last hit,
  // so a decode step.
  std::vector<radix::TokenId> decode = a.tokens;
  const std::vector<radix::TokenId> more = MakeTokens(1, 7);
  decode.insert(decode.end(), more.begin(), more.end());
  decode.push_back(5);  // a partial page is not a page
  ASSERT_OK(engine_->Match(ns_, decode).status());
  // a's 4 pages plus 3 new ones: midfill.
  std::vector<radix::TokenId> midfill = a.tokens;
  const std::vector<radix::TokenId> input = MakeTokens(3, 8);
  midfill.insert(midfill.end(), input.begin(), input.end());
  ASSERT_OK(engine_->Match(ns_, midfill).status());

  const NodeTiers tiers = engine_->Tiers();
  const LookupCounts& prefill = Counts(tiers, LookupPhase::kPrefill);
  EXPECT_EQ(prefill.lookups, 1u);
  EXPECT_EQ(prefill.queried_pages, 3u);
  EXPECT_EQ(prefill.miss_pages, 3u);
  EXPECT_EQ(prefill.dram_hit_pages, 0u);
  const LookupCounts& dec = Counts(tiers, LookupPhase::kDecode);
  EXPECT_EQ(dec.lookups, 1u);
  EXPECT_EQ(dec.queried_pages, 5u);
  EXPECT_EQ(dec.dram_hit_pages, 4u);
  EXPECT_EQ(dec.miss_pages, 1u);
  const LookupCounts& mid = Counts(tiers, LookupPhase::kMidfill);
  EXPECT_EQ(mid.lookups, 1u);
  EXPECT_EQ(mid.queried_pages, 7u);
  EXPECT_EQ(mid.dram_hit_pages, 4u);
  EXPECT_EQ(mid.miss_pages, 3u);
  EXPECT_EQ(tiers.Find(Tier::kDram)->pages, 4u);
  EXPECT_EQ(tiers.Find(Tier::kSsd), nullptr);  // no SSD tier, so no SSD pages
  EXPECT_EQ(tiers.text.pages, 0u);
}

TEST_F(NodeEngineLookupTest, TheCallersPhaseWinsAndTextHitsCount) {
  const BlobContent a = MakeBlob(ns_, 2, 1);
  ASSERT_OK_AND_ASSIGN(CommitPutReply ca, PutBlob(*engine_, ns_, std::nullopt, a));
  const BlobContent b = MakeBlob(ns_, 2, 2);
  ASSERT_OK(PutBlob(*engine_, ns_, BlobParent{ca.key, 2}, b).status());
  // Drop every byte: both blobs become TEXT (b is a leaf, then a).
  ASSERT_OK(engine_->Evict(Tier::kDram, uint64_t{1} << 30).status());
  std::vector<radix::TokenId> all = a.tokens;
  all.insert(all.end(), b.tokens.begin(), b.tokens.end());
  ASSERT_OK_AND_ASSIGN(MatchResult m, engine_->Match(ns_, all, LookupPhase::kDecode));
  EXPECT_EQ(m.matched_pages, 4u);
  const NodeTiers tiers = engine_->Tiers();
  const LookupCounts& dec = Counts(tiers, LookupPhase::kDecode);
  EXPECT_EQ(dec.lookups, 1u);
  EXPECT_EQ(dec.text_hit_pages, 4u);
  EXPECT_EQ(dec.miss_pages, 0u);
  EXPECT_EQ(Counts(tiers, LookupPhase::kPrefill).lookups, 0u);
  EXPECT_EQ(tiers.text.pages, 4u);
  EXPECT_EQ(tiers.Find(Tier::kDram)->pages, 0u);
}

TEST_F(NodeEngineLookupTest, MatchFeedsTheMissRatioCurve) {
  EXPECT_EQ(engine_->Tiers().mrc.accesses, 0u);
  EXPECT_TRUE(engine_->Tiers().curves.empty());
  const BlobContent a = MakeBlob(ns_, 4, 1);
  ASSERT_OK(PutBlob(*engine_, ns_, std::nullopt, a).status());
  // The same 4 pages looked up 10 times: 40 accesses of 4 distinct pages (1 KiB in all);
  // every access after the first round is a hit once the cache holds 1 KiB.
  for (int i = 0; i < 10; ++i) ASSERT_OK(engine_->Match(ns_, a.tokens).status());
  const NodeTiers tiers = engine_->Tiers();
  EXPECT_EQ(tiers.mrc.accesses, 40u);
  EXPECT_EQ(tiers.mrc.working_set_bytes, 4 * ns_.layout().BytesPerPage());
  // The grid is fine below the 1 KiB working set (where the curve rises) and every point
  // that holds it (past the estimator's 1/128 distance resolution) sees the 36
  // re-references hit.
  const uint64_t working_set = 4 * ns_.layout().BytesPerPage();
  int below = 0;
  for (const report::CurvePoint& p : tiers.mrc.points) {
    if (p.capacity_bytes < working_set) {
      ++below;
      EXPECT_LT(p.hit_ratio, 36.0 / 40);
    } else if (p.capacity_bytes > working_set + working_set / 64) {
      EXPECT_NEAR(p.hit_ratio, 36.0 / 40, 1e-9) << p.capacity_bytes;
    }
  }
  EXPECT_GE(below, 16);
  EXPECT_GT(tiers.token_bytes_per_kv_byte, 0);
  ASSERT_FALSE(tiers.curves.empty());
  EXPECT_EQ(tiers.curves[0].tier, Tier::kDram);
  EXPECT_EQ(tiers.curves[0].capacity_bytes, tiers.Find(Tier::kDram)->capacity_bytes);
  EXPECT_NEAR(tiers.curves[0].expected_hit_ratio, 36.0 / 40, 1e-9);
}

TEST(NodeEngineLookupOptionsTest, NoCurveWhenTurnedOff) {
  FakeClock clock;
  NodeEngineOptions options = SmallOptions(&clock);
  options.mrc_sampled_keys = 0;
  std::unique_ptr<NodeEngine> engine = NodeEngine::Create(options).value();
  const radix::Namespace ns = SmallNamespace();
  const BlobContent a = MakeBlob(ns, 2, 1);
  ASSERT_OK(PutBlob(*engine, ns, std::nullopt, a).status());
  ASSERT_OK(engine->Match(ns, a.tokens).status());
  const NodeTiers tiers = engine->Tiers();
  EXPECT_EQ(tiers.mrc.accesses, 0u);
  EXPECT_TRUE(tiers.curves.empty());
  EXPECT_EQ(tiers.lookups[LookupPhaseIndex(LookupPhase::kDecode)].dram_hit_pages, 2u);
}

}  // namespace
}  // namespace strata::store::core
