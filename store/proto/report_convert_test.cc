#include "strata/proto/report_convert.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/proto/repeated_convert.h"

namespace strata::proto {
namespace {

radix::BlobKey Key(uint64_t hi, uint64_t lo) {
  return radix::BlobKey{.hash = {.hi = hi, .lo = lo}};
}

radix::BlobKey KeyOf(const v1::BlobKey& key) {
  return radix::BlobKey{.hash = {.hi = key.hi(), .lo = key.lo()}};
}

std::vector<radix::TokenId> TokensOf(const std::string& bytes) {
  absl::StatusOr<TokenView> view = TokensFromProto(bytes, "tokens");
  EXPECT_TRUE(view.ok()) << view.status();
  if (!view.ok()) return {};
  return std::vector<radix::TokenId>(view->span().begin(), view->span().end());
}

TEST(ReportTierConvertTest, TiersRoundTrip) {
  for (const report::Tier tier : report::kTiers) {
    ASSERT_OK_AND_ASSIGN(report::Tier back, TierFromProto(TierToProto(tier), "tier"));
    EXPECT_EQ(back, tier);
  }
  EXPECT_EQ(TierToProto(report::Tier::kDram), v1::TIER_DRAM);
  EXPECT_EQ(TierToProto(report::Tier::kText), v1::TIER_TEXT);
  EXPECT_EQ(TierToProto(static_cast<report::Tier>(9)), v1::TIER_UNSPECIFIED);
}

TEST(ReportTierConvertTest, RejectsUnspecifiedAndUnknown) {
  absl::StatusOr<report::Tier> unset = TierFromProto(v1::TIER_UNSPECIFIED, "tier");
  EXPECT_CODE(unset, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unset.status().message(), "tier: missing");
  absl::StatusOr<report::Tier> unknown = TierFromProto(99, "tier");
  EXPECT_CODE(unknown, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(), "tier: unknown value 99");
  EXPECT_CODE(TierFromProto(-1, "tier"), absl::StatusCode::kInvalidArgument);
}

TEST(ReportPhaseConvertTest, PhasesBothWays) {
  for (const report::LookupPhase phase :
       {report::LookupPhase::kUnspecified, report::LookupPhase::kPrefill,
        report::LookupPhase::kMidfill, report::LookupPhase::kDecode}) {
    ASSERT_OK_AND_ASSIGN(const v1::Phase wire, PhaseToProto(phase));
    EXPECT_EQ(static_cast<int>(wire), static_cast<int>(phase));
    ASSERT_OK_AND_ASSIGN(const report::LookupPhase back, PhaseFromProto(wire, "phase"));
    EXPECT_EQ(back, phase);
  }
  const auto bad = PhaseToProto(static_cast<report::LookupPhase>(4));
  EXPECT_CODE(bad.status(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "phase: 4 is not a LookupPhase");
  const auto unknown = PhaseFromProto(7, "phase");
  EXPECT_CODE(unknown.status(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(), "phase: unknown value 7");
}

report::MatchResult ThreeSegments() {
  report::MatchResult reply;
  reply.matched_pages = 9;
  reply.segments = {
      {.blob = Key(1, 1),
       .blob_page_offset = 0,
       .page_count = 4,
       .seq_page_begin = 0,
       .blob_pages = 4,
       .tier = report::Tier::kDram},
      {.blob = Key(2, 2),
       .blob_page_offset = 0,
       .page_count = 3,
       .seq_page_begin = 4,
       .blob_pages = 6,
       .tier = report::Tier::kDram},
      {.blob = Key(3, 3),
       .blob_page_offset = 1,
       .page_count = 2,
       .seq_page_begin = 7,
       .blob_pages = 5,
       .tier = report::Tier::kSsd},
  };
  return reply;
}

TEST(ReportMatchToProtoTest, CopiesEverySegment) {
  v1::MatchResponse out;
  out.set_truncated(true);  // stale content is cleared
  MatchToProto(ThreeSegments(), &out);
  EXPECT_EQ(out.matched_pages(), 9u);
  EXPECT_FALSE(out.truncated());
  ASSERT_EQ(out.segments_size(), 3);
  const v1::Segment& s = out.segments(2);
  EXPECT_EQ(KeyOf(s.blob()), Key(3, 3));
  EXPECT_EQ(s.blob_page_offset(), 1u);
  EXPECT_EQ(s.page_count(), 2u);
  EXPECT_EQ(s.seq_page_begin(), 7u);
  EXPECT_EQ(s.blob_pages(), 5u);
  EXPECT_EQ(s.tier(), v1::TIER_SSD);
  EXPECT_EQ(out.segments(0).tier(), v1::TIER_DRAM);
}

TEST(ReportMatchToProtoTest, TruncatesAtSegmentBoundaryAndShrinksMatchedPages) {
  v1::MatchResponse out;
  MatchToProto(ThreeSegments(), &out, /*max_segments=*/2);
  EXPECT_TRUE(out.truncated());
  ASSERT_EQ(out.segments_size(), 2);
  EXPECT_EQ(out.matched_pages(), 7u);  // pages the kept segments cover
  MatchToProto(ThreeSegments(), &out, /*max_segments=*/3);
  EXPECT_FALSE(out.truncated());
  EXPECT_EQ(out.matched_pages(), 9u);
  MatchToProto(report::MatchResult{}, &out);
  EXPECT_EQ(out.matched_pages(), 0u);
  EXPECT_EQ(out.segments_size(), 0);
}

TEST(ReportMatchToProtoTest, ReadsBackWhatItWrote) {
  report::MatchResult match = ThreeSegments();
  match.segments[2].tier = report::Tier::kText;
  match.segments[2].tokens = {5, 6, 7, 8, 9, 10, 11, 12};
  v1::MatchResponse wire;
  MatchToProto(match, &wire);
  ASSERT_OK_AND_ASSIGN(const report::MatchResult back, MatchFromProto(wire));
  EXPECT_EQ(back.matched_pages, 9u);
  EXPECT_FALSE(back.truncated);
  EXPECT_EQ(back.segments, match.segments);
  wire.mutable_segments(1)->set_tier(static_cast<v1::Tier>(9));
  const auto bad = MatchFromProto(wire);
  EXPECT_CODE(bad, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "segments[1].tier: unknown value 9");
}

TEST(ReportTiersToProtoTest, DramStatsIndexAndEngineCounts) {
  report::NodeTiers tiers;
  tiers.tiers.push_back(report::TierStats{.tier = report::Tier::kDram,
                                          .capacity_bytes = 1000,
                                          .used_bytes = 300,
                                          .blobs = 3,
                                          .hits = 4,
                                          .misses = 5,
                                          .evictions = 6,
                                          .promotions = 7,
                                          .demotions = 8});
  tiers.index = radix::RadixTreeStats{.roots = 1,
                                      .nodes = 2,
                                      .leaves = 3,
                                      .pages = 4,
                                      .token_bytes = 5,
                                      .index_bytes = 6,
                                      .pinned_nodes = 7};
  tiers.engine.namespaces = 11;
  tiers.engine.blobs = 12;
  tiers.engine.unlinked_blobs = 13;
  tiers.engine.token_only_blobs = 14;
  tiers.engine.segments = 21;
  tiers.engine.replicated_blobs = 22;
  tiers.engine.pending_puts = 15;
  tiers.engine.leases = 16;
  tiers.engine.matches = 17;
  tiers.engine.matched_pages = 18;
  tiers.engine.queried_pages = 19;
  tiers.engine.draining = true;
  v1::TiersResponse out;
  ToProto(tiers, &out);
  ASSERT_EQ(out.tiers_size(), 1);
  const v1::TierStats& dram = out.tiers(0);
  EXPECT_EQ(dram.tier(), v1::TIER_DRAM);
  EXPECT_EQ(dram.capacity_bytes(), 1000u);
  EXPECT_EQ(dram.used_bytes(), 300u);
  EXPECT_EQ(dram.free_bytes(), 700u);
  EXPECT_EQ(dram.blobs(), 3u);
  EXPECT_EQ(dram.hits(), 4u);
  EXPECT_EQ(dram.misses(), 5u);
  EXPECT_EQ(dram.evictions(), 6u);
  EXPECT_EQ(dram.promotions(), 7u);
  EXPECT_EQ(dram.demotions(), 8u);
  EXPECT_EQ(out.index().roots(), 1u);
  EXPECT_EQ(out.index().nodes(), 2u);
  EXPECT_EQ(out.index().leaves(), 3u);
  EXPECT_EQ(out.index().pages(), 4u);
  EXPECT_EQ(out.index().token_bytes(), 5u);
  EXPECT_EQ(out.index().index_bytes(), 6u);
  EXPECT_EQ(out.index().pinned_nodes(), 7u);
  EXPECT_EQ(out.engine().namespaces(), 11u);
  EXPECT_EQ(out.engine().blobs(), 12u);
  EXPECT_EQ(out.engine().unlinked_blobs(), 13u);
  EXPECT_EQ(out.engine().token_only_blobs(), 14u);
  EXPECT_EQ(out.engine().segments(), 21u);
  EXPECT_EQ(out.engine().replicated_blobs(), 22u);
  EXPECT_EQ(out.engine().pending_puts(), 15u);
  EXPECT_EQ(out.engine().leases(), 16u);
  EXPECT_EQ(out.engine().matches(), 17u);
  EXPECT_EQ(out.engine().matched_pages(), 18u);
  EXPECT_EQ(out.engine().queried_pages(), 19u);
  EXPECT_TRUE(out.engine().draining());
}

TEST(ReportTiersToProtoTest, PagesLookupsByPhaseAndCurves) {
  report::NodeTiers tiers;
  tiers.tiers.push_back(
      report::TierStats{.tier = report::Tier::kDram, .capacity_bytes = 4096, .pages = 21});
  tiers.tiers.push_back(
      report::TierStats{.tier = report::Tier::kSsd, .capacity_bytes = 1 << 20, .pages = 22});
  tiers.text.pages = 23;
  for (int i = 0; i < report::kLookupPhases; ++i) {
    const uint64_t base = 100 * (i + 1);
    tiers.lookups.push_back(report::LookupCounts{.phase = report::kCountedPhases[i],
                                                 .lookups = base + 1,
                                                 .queried_pages = base + 20,
                                                 .dram_hit_pages = base + 2,
                                                 .ssd_hit_pages = 3,
                                                 .text_hit_pages = 4,
                                                 .miss_pages = 11});
  }
  tiers.mrc.points = {{1024, 0.25}, {2048, 0.5}, {4096, 0.75}};
  tiers.mrc.accesses = 500;
  tiers.mrc.sampled_accesses = 50;
  tiers.mrc.sample_rate = 0.1;
  tiers.mrc.working_set_bytes = 8192;
  tiers.curves.push_back(report::TierCurve{.tier = report::Tier::kDram,
                                           .capacity_bytes = 4096,
                                           .expected_hit_ratio = 0.75,
                                           .points = tiers.mrc.points,
                                           .recommended = report::CurvePoint{2048, 0.5},
                                           .advice = "shrink dram"});
  tiers.curves.push_back(report::TierCurve{.tier = report::Tier::kSsd, .capacity_bytes = 1 << 20});
  tiers.curves.push_back(report::TierCurve{.tier = report::Tier::kText, .capacity_bytes = 77});
  tiers.token_bytes_per_kv_byte = 0.125;

  v1::TiersResponse out;
  ToProto(tiers, &out);
  ASSERT_EQ(out.tiers_size(), 2);
  EXPECT_EQ(out.tiers(0).pages(), 21u);
  EXPECT_EQ(out.tiers(1).tier(), v1::TIER_SSD);
  EXPECT_EQ(out.tiers(1).pages(), 22u);
  EXPECT_EQ(out.text().pages(), 23u);
  ASSERT_EQ(out.lookups_size(), 3);
  const v1::Phase phases[] = {v1::PHASE_PREFILL, v1::PHASE_MIDFILL, v1::PHASE_DECODE};
  for (int i = 0; i < 3; ++i) {
    const v1::LookupStats& l = out.lookups(i);
    const uint64_t base = 100 * (i + 1);
    EXPECT_EQ(l.phase(), phases[i]);
    EXPECT_EQ(l.lookups(), base + 1);
    EXPECT_EQ(l.queried_pages(), base + 20);
    EXPECT_EQ(l.dram_hit_pages(), base + 2);
    EXPECT_EQ(l.ssd_hit_pages(), 3u);
    EXPECT_EQ(l.text_hit_pages(), 4u);
    EXPECT_EQ(l.miss_pages(), 11u);
  }
  ASSERT_EQ(out.mrc().points_size(), 3);
  EXPECT_EQ(out.mrc().points(1).capacity_bytes(), 2048u);
  EXPECT_DOUBLE_EQ(out.mrc().points(1).hit_ratio(), 0.5);
  EXPECT_EQ(out.mrc().accesses(), 500u);
  EXPECT_EQ(out.mrc().sampled_accesses(), 50u);
  EXPECT_DOUBLE_EQ(out.mrc().sample_rate(), 0.1);
  EXPECT_EQ(out.mrc().working_set_bytes(), 8192u);
  ASSERT_EQ(out.curves_size(), 3);
  const v1::TierCurve& dram = out.curves(0);
  EXPECT_EQ(dram.tier(), v1::TIER_DRAM);
  EXPECT_EQ(dram.capacity_bytes(), 4096u);
  EXPECT_DOUBLE_EQ(dram.expected_hit_ratio(), 0.75);
  ASSERT_EQ(dram.points_size(), 3);
  EXPECT_EQ(dram.points(2).capacity_bytes(), 4096u);
  EXPECT_TRUE(dram.has_recommended());
  EXPECT_EQ(dram.recommended().capacity_bytes(), 2048u);
  EXPECT_DOUBLE_EQ(dram.recommended().hit_ratio(), 0.5);
  EXPECT_EQ(dram.advice(), "shrink dram");
  EXPECT_EQ(out.curves(1).tier(), v1::TIER_SSD);
  EXPECT_EQ(out.curves(2).tier(), v1::TIER_TEXT);
  EXPECT_EQ(out.curves(2).capacity_bytes(), 77u);
  EXPECT_DOUBLE_EQ(out.token_bytes_per_kv_byte(), 0.125);
}

TEST(ReportTiersToProtoTest, EmptyStatsWriteNoEntriesAndReadBackEqual) {
  v1::TiersResponse out;
  ToProto(report::NodeTiers{}, &out);
  EXPECT_EQ(out.tiers_size(), 0);
  EXPECT_EQ(out.lookups_size(), 0);  // a node always has three (NodeEngine::Tiers)
  EXPECT_EQ(out.mrc().points_size(), 0);
  EXPECT_EQ(out.curves_size(), 0);
}

TEST(ReportTiersToProtoTest, EverythingReadsBackAsWritten) {
  report::NodeTiers tiers;
  tiers.tiers.push_back(report::TierStats{.tier = report::Tier::kDram,
                                          .capacity_bytes = 1000,
                                          .used_bytes = 300,
                                          .blobs = 3,
                                          .hits = 4,
                                          .misses = 5,
                                          .evictions = 6,
                                          .promotions = 7,
                                          .demotions = 8,
                                          .pages = 9});
  tiers.tiers.push_back(report::TierStats{.tier = report::Tier::kSsd, .capacity_bytes = 50});
  tiers.text = report::TextTierStats{1, 2, 3, 4, 5, 6, 7};
  tiers.rebuild = report::RebuildQueueStats{1, 2, 3, 4, 5, 6};
  tiers.index = report::IndexStats{1, 2, 3, 4, 5, 6, 7};
  tiers.engine = report::EngineStats{.namespaces = 1,
                                     .blobs = 2,
                                     .segments = 5,
                                     .replicated_blobs = 6,
                                     .leases = 3,
                                     .meta_write_errors = 4,
                                     .draining = true};
  tiers.lookups.push_back(
      report::LookupCounts{.phase = report::LookupPhase::kMidfill, .text_hit_pages = 4});
  tiers.mrc = report::MissRatioCurve{.points = {{10, 0.5}}, .accesses = 4, .sample_rate = 0.5};
  tiers.curves.push_back(report::TierCurve{.tier = report::Tier::kText,
                                           .capacity_bytes = 77,
                                           .points = {{5, 0.25}},
                                           .recommended = report::CurvePoint{5, 0.25},
                                           .advice = "fine"});
  tiers.curves.push_back(report::TierCurve{.tier = report::Tier::kSsd});  // no recommendation
  tiers.token_bytes_per_kv_byte = 0.5;
  tiers.meta = report::MetaStats{.records = 1,
                                 .disk_bytes = 2,
                                 .memtable_bytes = 3,
                                 .table_reader_bytes = 4,
                                 .block_cache_bytes = 5};
  tiers.tenants = {{.tenant = "acme", .blobs = 2, .dram_bytes = 3, .ssd_bytes = 4, .text_blobs = 5},
                   {.tenant = "globex", .blobs = 1}};
  v1::TiersResponse wire;
  ToProto(tiers, &wire);
  ASSERT_OK_AND_ASSIGN(const report::NodeTiers back, TiersFromProto(wire));
  EXPECT_EQ(back.tenants, tiers.tenants);
  EXPECT_EQ(back.tiers, tiers.tiers);
  EXPECT_EQ(back.text, tiers.text);
  EXPECT_EQ(back.rebuild, tiers.rebuild);
  EXPECT_EQ(back.index.pinned_nodes, 7u);
  EXPECT_EQ(back.engine, tiers.engine);
  EXPECT_EQ(back.meta, tiers.meta);
  EXPECT_EQ(back.lookups, tiers.lookups);
  EXPECT_EQ(back.mrc.points, tiers.mrc.points);
  EXPECT_DOUBLE_EQ(back.mrc.sample_rate, 0.5);
  EXPECT_EQ(back.curves, tiers.curves);
  EXPECT_DOUBLE_EQ(back.token_bytes_per_kv_byte, 0.5);

  // Entries newer than the reader are left out; a byte tier it cannot name is an error.
  wire.mutable_lookups(0)->set_phase(static_cast<v1::Phase>(9));
  wire.mutable_curves(0)->set_tier(static_cast<v1::Tier>(9));
  ASSERT_OK_AND_ASSIGN(const report::NodeTiers newer, TiersFromProto(wire));
  EXPECT_TRUE(newer.lookups.empty());
  ASSERT_EQ(newer.curves.size(), 1u);
  EXPECT_EQ(newer.curves[0].tier, report::Tier::kSsd);
  wire.mutable_tiers(1)->set_tier(v1::TIER_UNSPECIFIED);
  const auto bad = TiersFromProto(wire);
  EXPECT_CODE(bad, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "tiers[1].tier: missing");
}

TEST(ReportCurvePointsTest, ThinsEvenlyKeepingBothEnds) {
  std::vector<report::CurvePoint> points;
  for (uint64_t i = 0; i < 10; ++i) points.push_back({(i + 1) * 100, i / 10.0});
  google::protobuf::RepeatedPtrField<v1::CurvePoint> out;
  CurvePointsToProto(points, 10, &out);
  ASSERT_EQ(out.size(), 10);
  CurvePointsToProto(points, 4, &out);  // indices 0, 3, 6, 9
  ASSERT_EQ(out.size(), 4);
  EXPECT_EQ(out[0].capacity_bytes(), 100u);
  EXPECT_EQ(out[1].capacity_bytes(), 400u);
  EXPECT_EQ(out[2].capacity_bytes(), 700u);
  EXPECT_EQ(out[3].capacity_bytes(), 1000u);
  EXPECT_DOUBLE_EQ(out[3].hit_ratio(), 0.9);
  CurvePointsToProto(points, 1, &out);
  ASSERT_EQ(out.size(), 1);
  EXPECT_EQ(out[0].capacity_bytes(), 1000u);
  CurvePointsToProto({}, 4, &out);
  EXPECT_EQ(out.size(), 0);
}

TEST(ReportCurvePointsTest, AdviceIsCutAtACharacterBoundary) {
  EXPECT_EQ(CutAdvice("grow dram", 100), "grow dram");
  EXPECT_EQ(CutAdvice("grow dram", 4), "grow");
  // "a" then U+2192 (3 bytes: E2 86 92): cutting at 2 or 3 bytes keeps only "a".
  EXPECT_EQ(CutAdvice("a\xE2\x86\x92"
                      "b",
                      2),
            "a");
  EXPECT_EQ(CutAdvice("a\xE2\x86\x92"
                      "b",
                      3),
            "a");
  EXPECT_EQ(CutAdvice("a\xE2\x86\x92"
                      "b",
                      4),
            "a\xE2\x86\x92");
}

TEST(ReportTiersToProtoTest, SsdTextAndRebuildQueue) {
  report::NodeTiers tiers;
  tiers.tiers.push_back(report::TierStats{
      .tier = report::Tier::kDram, .capacity_bytes = 1000, .used_bytes = 100, .blobs = 1});
  tiers.tiers.push_back(report::TierStats{.tier = report::Tier::kSsd,
                                          .capacity_bytes = 5000,
                                          .used_bytes = 2000,
                                          .blobs = 4,
                                          .hits = 5,
                                          .misses = 6,
                                          .evictions = 7,
                                          .promotions = 8,
                                          .demotions = 9});
  tiers.text = report::TextTierStats{.capacity_bytes = 64,
                                     .used_bytes = 32,
                                     .blobs = 3,
                                     .drops = 4,
                                     .deletions = 5,
                                     .rebuilds = 6};
  tiers.rebuild = report::RebuildQueueStats{
      .queued = 1, .in_flight = 2, .requested = 3, .completed = 4, .expired = 5, .dropped = 6};
  v1::TiersResponse out;
  ToProto(tiers, &out);
  ASSERT_EQ(out.tiers_size(), 2);
  EXPECT_EQ(out.tiers(0).tier(), v1::TIER_DRAM);
  EXPECT_EQ(out.tiers(0).free_bytes(), 900u);
  const v1::TierStats& ssd = out.tiers(1);
  EXPECT_EQ(ssd.tier(), v1::TIER_SSD);
  EXPECT_EQ(ssd.capacity_bytes(), 5000u);
  EXPECT_EQ(ssd.used_bytes(), 2000u);
  EXPECT_EQ(ssd.free_bytes(), 3000u);
  EXPECT_EQ(ssd.blobs(), 4u);
  EXPECT_EQ(ssd.hits(), 5u);
  EXPECT_EQ(ssd.misses(), 6u);
  EXPECT_EQ(ssd.evictions(), 7u);
  EXPECT_EQ(ssd.promotions(), 8u);
  EXPECT_EQ(ssd.demotions(), 9u);
  EXPECT_EQ(out.text().capacity_bytes(), 64u);
  EXPECT_EQ(out.text().used_bytes(), 32u);
  EXPECT_EQ(out.text().blobs(), 3u);
  EXPECT_EQ(out.text().drops(), 4u);
  EXPECT_EQ(out.text().deletions(), 5u);
  EXPECT_EQ(out.text().rebuilds(), 6u);
  EXPECT_EQ(out.rebuild().queued(), 1u);
  EXPECT_EQ(out.rebuild().in_flight(), 2u);
  EXPECT_EQ(out.rebuild().requested(), 3u);
  EXPECT_EQ(out.rebuild().completed(), 4u);
  EXPECT_EQ(out.rebuild().expired(), 5u);
  EXPECT_EQ(out.rebuild().dropped(), 6u);

  // Without an SSD tier: DRAM only.
  tiers.tiers.pop_back();
  ToProto(tiers, &out);
  ASSERT_EQ(out.tiers_size(), 1);
  EXPECT_EQ(out.tiers(0).tier(), v1::TIER_DRAM);
}

TEST(ReportTierConvertTest, EvictAcceptsText) {
  ASSERT_OK_AND_ASSIGN(report::Tier text, TierFromProto(v1::TIER_TEXT, "tier"));
  EXPECT_EQ(text, report::Tier::kText);
  ASSERT_OK_AND_ASSIGN(report::Tier ssd, TierFromProto(v1::TIER_SSD, "tier"));
  EXPECT_EQ(ssd, report::Tier::kSsd);
  EXPECT_EQ(TierFromProto(v1::TIER_UNSPECIFIED, "tier").status().message(), "tier: missing");
  EXPECT_EQ(TierFromProto(17, "tier").status().message(), "tier: unknown value 17");
}

// Pages [0, 2) in DRAM, [2, 4) TEXT (tokens 10..13), [4, 5) TEXT (tokens 20, 21).
report::MatchResult DramThenText() {
  report::MatchResult reply;
  reply.matched_pages = 5;
  reply.segments = {
      {.blob = Key(1, 1),
       .blob_page_offset = 0,
       .page_count = 2,
       .seq_page_begin = 0,
       .blob_pages = 2,
       .tier = report::Tier::kDram},
      {.blob = Key(2, 2),
       .blob_page_offset = 0,
       .page_count = 2,
       .seq_page_begin = 2,
       .blob_pages = 3,
       .tier = report::Tier::kText,
       .tokens = {10, 11, 12, 13}},
      {.blob = Key(3, 3),
       .blob_page_offset = 1,
       .page_count = 1,
       .seq_page_begin = 4,
       .blob_pages = 2,
       .tier = report::Tier::kText,
       .tokens = {20, 21}},
  };
  return reply;
}

TEST(ReportTextMatchToProtoTest, TextSegmentsCarryTheirTokensOthersNone) {
  v1::MatchResponse out;
  MatchToProto(DramThenText(), &out);
  EXPECT_FALSE(out.truncated());
  EXPECT_EQ(out.matched_pages(), 5u);
  ASSERT_EQ(out.segments_size(), 3);
  EXPECT_EQ(out.segments(0).tier(), v1::TIER_DRAM);
  EXPECT_TRUE(out.segments(0).tokens().empty());
  EXPECT_EQ(out.segments(1).tier(), v1::TIER_TEXT);
  EXPECT_EQ(TokensOf(out.segments(1).tokens()), (std::vector<radix::TokenId>{10, 11, 12, 13}));
  EXPECT_EQ(TokensOf(out.segments(2).tokens()), (std::vector<radix::TokenId>{20, 21}));
  // A byte tier's tokens, should a reply carry any, are not sent.
  report::MatchResult odd = DramThenText();
  odd.segments[0].tokens = {1, 2, 3, 4};
  MatchToProto(odd, &out);
  EXPECT_TRUE(out.segments(0).tokens().empty());
}

TEST(ReportTextMatchToProtoTest, TruncatesBeforeTheSegmentPassingTheTextTokenLimit) {
  v1::MatchResponse out;
  // 4 + 2 tokens fit in 6; in 5 the last segment goes.
  MatchToProto(DramThenText(), &out, kMaxMatchSegments, /*max_text_tokens=*/6);
  EXPECT_FALSE(out.truncated());
  EXPECT_EQ(out.segments_size(), 3);
  MatchToProto(DramThenText(), &out, kMaxMatchSegments, /*max_text_tokens=*/5);
  EXPECT_TRUE(out.truncated());
  ASSERT_EQ(out.segments_size(), 2);
  EXPECT_EQ(out.matched_pages(), 4u);
  // Below the first TEXT segment's 4: only the DRAM segment stays.
  MatchToProto(DramThenText(), &out, kMaxMatchSegments, /*max_text_tokens=*/3);
  EXPECT_TRUE(out.truncated());
  ASSERT_EQ(out.segments_size(), 1);
  EXPECT_EQ(out.matched_pages(), 2u);
  // The segment limit still applies with the token limit.
  MatchToProto(DramThenText(), &out, /*max_segments=*/1, /*max_text_tokens=*/100);
  EXPECT_TRUE(out.truncated());
  EXPECT_EQ(out.segments_size(), 1);
}

TEST(ReportPhaseFromProtoTest, EveryPhaseAndUnknownValues) {
  ASSERT_OK_AND_ASSIGN(report::LookupPhase unspecified,
                       PhaseFromProto(v1::PHASE_UNSPECIFIED, "phase"));
  EXPECT_EQ(unspecified, report::LookupPhase::kUnspecified);
  ASSERT_OK_AND_ASSIGN(report::LookupPhase prefill, PhaseFromProto(v1::PHASE_PREFILL, "phase"));
  EXPECT_EQ(prefill, report::LookupPhase::kPrefill);
  ASSERT_OK_AND_ASSIGN(report::LookupPhase midfill, PhaseFromProto(v1::PHASE_MIDFILL, "phase"));
  EXPECT_EQ(midfill, report::LookupPhase::kMidfill);
  ASSERT_OK_AND_ASSIGN(report::LookupPhase decode, PhaseFromProto(v1::PHASE_DECODE, "phase"));
  EXPECT_EQ(decode, report::LookupPhase::kDecode);
  // A MatchRequest carrying a number the wire does not define (proto3 keeps it).
  v1::MatchRequest request;
  request.set_phase(static_cast<v1::Phase>(4));
  const absl::Status unknown = PhaseFromProto(request.phase(), "phase").status();
  EXPECT_CODE(unknown, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.message(), "phase: unknown value 4");
  EXPECT_EQ(PhaseFromProto(-1, "phase").status().message(), "phase: unknown value -1");
}

}  // namespace
}  // namespace strata::proto
