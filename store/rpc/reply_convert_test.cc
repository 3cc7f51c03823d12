#include "strata/store/rpc/reply_convert.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/repeated_convert.h"
#include "strata/radix/namespace.h"
#include "strata/radix/prefix_hash.h"

namespace strata::store::rpc {
namespace {

radix::KvLayout SmallLayout() {
  return radix::KvLayout{.num_layers = 4,
                         .num_kv_heads = 2,
                         .head_dim = 8,
                         .dtype = radix::DType::kFloat16,
                         .page_tokens = 4,
                         .format = radix::KvFormat::kKeyValue,
                         .tp_rank = 0,
                         .tp_world = 1};
}

radix::BlobKey Key(uint64_t hi, uint64_t lo) {
  return radix::BlobKey{.hash = {.hi = hi, .lo = lo}};
}

radix::BlobKey KeyOf(const v1::BlobKey& key) {
  return radix::BlobKey{.hash = {.hi = key.hi(), .lo = key.lo()}};
}

const absl::Time kNow = absl::FromUnixSeconds(1893456000);

TEST(TierConvertTest, ByteTiersRoundTrip) {
  for (tiering::TierKind tier :
       {tiering::TierKind::kHbm, tiering::TierKind::kDram, tiering::TierKind::kSsd}) {
    ASSERT_OK_AND_ASSIGN(tiering::TierKind back, TierFromProto(TierToProto(tier), "tier"));
    EXPECT_EQ(back, tier);
  }
  EXPECT_EQ(TierToProto(tiering::TierKind::kDram), v1::TIER_DRAM);
}

TEST(TierConvertTest, RejectsUnspecifiedTextAndUnknown) {
  absl::StatusOr<tiering::TierKind> unset = TierFromProto(v1::TIER_UNSPECIFIED, "tier");
  EXPECT_CODE(unset, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unset.status().message(), "tier: missing");
  absl::StatusOr<tiering::TierKind> text = TierFromProto(v1::TIER_TEXT, "tier");
  EXPECT_CODE(text, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(text.status().message(), "tier: TIER_TEXT holds no bytes");
  absl::StatusOr<tiering::TierKind> unknown = TierFromProto(99, "tier");
  EXPECT_CODE(unknown, absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(), "tier: unknown value 99");
  EXPECT_CODE(TierFromProto(-1, "tier"), absl::StatusCode::kInvalidArgument);
}

TEST(TimeConvertTest, ExpiresInMsIsWholeMillisecondsNeverNegative) {
  EXPECT_EQ(ExpiresInMs(kNow + absl::Microseconds(1500900), kNow), 1500u);
  EXPECT_EQ(ExpiresInMs(kNow + absl::Seconds(30), kNow), 30000u);
  EXPECT_EQ(ExpiresInMs(kNow, kNow), 0u);
  EXPECT_EQ(ExpiresInMs(kNow - absl::Seconds(5), kNow), 0u);
  EXPECT_EQ(ExpiresInMs(absl::InfinitePast(), kNow), 0u);
  EXPECT_EQ(ExpiresInMs(absl::InfiniteFuture(), kNow), UINT64_MAX);
}

TEST(TimeConvertTest, UnixMillis) {
  EXPECT_EQ(UnixMillis(absl::FromUnixMillis(1893456000123)), 1893456000123u);
  EXPECT_EQ(UnixMillis(absl::InfinitePast()), 0u);
  EXPECT_EQ(UnixMillis(absl::FromUnixSeconds(-10)), 0u);
}

core::MatchReply ThreeSegments() {
  core::MatchReply reply;
  reply.matched_pages = 9;
  reply.segments = {
      {.blob = Key(1, 1),
       .blob_page_offset = 0,
       .page_count = 4,
       .seq_page_begin = 0,
       .blob_pages = 4,
       .tier = core::TierState::kDram},
      {.blob = Key(2, 2),
       .blob_page_offset = 0,
       .page_count = 3,
       .seq_page_begin = 4,
       .blob_pages = 6,
       .tier = core::TierState::kDram},
      {.blob = Key(3, 3),
       .blob_page_offset = 1,
       .page_count = 2,
       .seq_page_begin = 7,
       .blob_pages = 5,
       .tier = core::TierState::kSsd},
  };
  return reply;
}

TEST(MatchToProtoTest, CopiesEverySegment) {
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

TEST(MatchToProtoTest, TruncatesAtSegmentBoundaryAndShrinksMatchedPages) {
  v1::MatchResponse out;
  MatchToProto(ThreeSegments(), &out, /*max_segments=*/2);
  EXPECT_TRUE(out.truncated());
  ASSERT_EQ(out.segments_size(), 2);
  EXPECT_EQ(out.matched_pages(), 7u);  // pages the kept segments cover
  MatchToProto(ThreeSegments(), &out, /*max_segments=*/3);
  EXPECT_FALSE(out.truncated());
  EXPECT_EQ(out.matched_pages(), 9u);
  MatchToProto(core::MatchReply{}, &out);
  EXPECT_EQ(out.matched_pages(), 0u);
  EXPECT_EQ(out.segments_size(), 0);
}

TEST(BeginPutToProtoTest, NewPutCarriesIdExpiryAndDataPlane) {
  core::BeginPutReply reply{.exists = false,
                            .key = Key(7, 8),
                            .put_id = 42,
                            .extent = {.offset = 65536, .length = 65536},
                            .deadline = kNow + absl::Seconds(60)};
  v1::BeginPutResponse out;
  BeginPutToProto(reply, kNow, "127.0.0.1:7401", &out);
  EXPECT_FALSE(out.exists());
  EXPECT_EQ(KeyOf(out.key()), Key(7, 8));
  EXPECT_EQ(out.put_id(), 42u);
  EXPECT_EQ(out.expires_in_ms(), 60000u);
  EXPECT_EQ(out.data_plane().ucx_address(), "127.0.0.1:7401");
}

TEST(BeginPutToProtoTest, ExistingKeyCarriesOnlyTheKey) {
  core::BeginPutReply reply{.exists = true, .key = Key(7, 8)};
  v1::BeginPutResponse out;
  BeginPutToProto(reply, kNow, "127.0.0.1:7401", &out);
  EXPECT_TRUE(out.exists());
  EXPECT_EQ(KeyOf(out.key()), Key(7, 8));
  EXPECT_EQ(out.put_id(), 0u);
  EXPECT_EQ(out.expires_in_ms(), 0u);
  EXPECT_FALSE(out.has_data_plane());
}

TEST(CommitAndDeleteToProtoTest, CopyFields) {
  v1::CommitPutResponse commit;
  CommitPutToProto(core::CommitPutReply{.key = Key(5, 6), .indexed_pages = 3}, &commit);
  EXPECT_EQ(KeyOf(commit.key()), Key(5, 6));
  EXPECT_EQ(commit.indexed_pages(), 3u);
  v1::DeleteResponse del;
  DeleteToProto(core::DeleteReply{.pages_removed = 12, .blobs_unlinked = 2}, &del);
  EXPECT_EQ(del.pages_removed(), 12u);
  EXPECT_EQ(del.blobs_unlinked(), 2u);
}

TEST(ReadToProtoTest, OneGrantPerRangeWithChunkSizeAndChecksums) {
  const radix::KvLayout layout = SmallLayout();
  const uint64_t chunk = layout.BytesPerLayerPage();
  const std::vector<core::ReadRange> ranges = {
      {.blob = Key(1, 2), .first_page = 1, .num_pages = 2, .layer_begin = 1, .layer_end = 3},
      {.blob = Key(3, 4), .first_page = 0, .num_pages = 1, .layer_begin = 0, .layer_end = 1},
  };
  core::ReadReply reply;
  reply.lease_id = 99;
  reply.expiry = kNow + absl::Seconds(30);
  reply.ranges.push_back(
      core::ReadRangeReply{.layer_ranges = {{.offset = 5 * chunk, .length = 2 * chunk},
                                            {.offset = 9 * chunk, .length = 2 * chunk}},
                           .checksums = {11, 12, 13, 14},
                           .blob_bytes = 16 * chunk,
                           .arena_offset = 1 << 20});
  reply.ranges.push_back(core::ReadRangeReply{.layer_ranges = {{.offset = 0, .length = chunk}},
                                              .checksums = {21},
                                              .blob_bytes = 4 * chunk,
                                              .arena_offset = 2 << 20});
  v1::ReadResponse out;
  ReadToProto(reply, ranges, layout, kNow, "10.0.0.1:7401", &out);
  EXPECT_EQ(out.lease_id(), 99u);
  EXPECT_EQ(out.expires_in_ms(), 30000u);
  EXPECT_EQ(out.data_plane().ucx_address(), "10.0.0.1:7401");
  ASSERT_EQ(out.grants_size(), 2);
  const v1::ReadGrant& g = out.grants(0);
  EXPECT_EQ(KeyOf(g.blob()), Key(1, 2));
  EXPECT_EQ(g.chunk_bytes(), chunk);
  ASSERT_EQ(g.layer_ranges_size(), 2);
  EXPECT_EQ(g.layer_ranges(1).offset(), 9 * chunk);
  EXPECT_EQ(g.layer_ranges(1).length(), 2 * chunk);
  EXPECT_EQ(std::vector<uint64_t>(g.chunk_checksums().begin(), g.chunk_checksums().end()),
            (std::vector<uint64_t>{11, 12, 13, 14}));
  EXPECT_EQ(g.blob_bytes(), 16 * chunk);
  EXPECT_EQ(g.arena_offset(), 1u << 20);
  EXPECT_EQ(KeyOf(out.grants(1).blob()), Key(3, 4));
  EXPECT_EQ(out.grants(1).chunk_checksums_size(), 1);
}

core::BlobInfo SampleInfo() {
  core::BlobInfo info;
  info.key = Key(0xAB, 0xCD);
  info.namespace_hash = {.hi = 1, .lo = 2};
  info.tenant = "acme";
  info.model = "org/model-7b";
  info.layout = SmallLayout();
  info.parent = core::BlobParent{.key = Key(0x11, 0x22), .pages = 3};
  info.start_hash = {.hi = 3, .lo = 4};
  info.first_page = 3;
  info.pages = 2;
  info.bytes = 2 * SmallLayout().BytesPerPage();
  info.blob_checksum = 0xFEEDFACE;
  info.tiers = {core::TierState::kDram};
  info.extent = {.offset = 0, .length = 65536};
  info.pages_in_index = 1;
  info.leases = 2;
  info.pinned = true;
  info.created = absl::FromUnixMillis(1000);
  info.last_access = absl::FromUnixMillis(2000);
  info.hits = 5;
  info.tokens = {1, 2, 3, 4, 5, 6, 7, 8};
  return info;
}

TEST(BlobInfoToProtoTest, CopiesEveryField) {
  const core::BlobInfo info = SampleInfo();
  v1::BlobInfo out;
  BlobInfoToProto(info, &out);
  EXPECT_EQ(KeyOf(out.key()), info.key);
  ASSERT_OK_AND_ASSIGN(radix::Namespace ns, proto::NamespaceFromProto(out.ns(), "ns"));
  EXPECT_EQ(ns.tenant(), "acme");
  EXPECT_EQ(ns.model(), "org/model-7b");
  EXPECT_EQ(ns.layout(), SmallLayout());
  EXPECT_EQ(proto::PrefixHashFromProto(out.namespace_hash()), info.namespace_hash);
  ASSERT_TRUE(out.has_parent());
  EXPECT_EQ(KeyOf(out.parent().key()), Key(0x11, 0x22));
  EXPECT_EQ(out.parent().pages(), 3u);
  EXPECT_EQ(proto::PrefixHashFromProto(out.start_hash()), info.start_hash);
  EXPECT_EQ(out.first_page(), 3u);
  EXPECT_EQ(out.pages(), 2u);
  EXPECT_EQ(out.bytes(), info.bytes);
  EXPECT_EQ(out.checksum(), 0xFEEDFACEu);
  ASSERT_EQ(out.tiers_size(), 1);
  EXPECT_EQ(out.tiers(0), v1::TIER_DRAM);
  EXPECT_EQ(out.pages_indexed(), 1u);
  EXPECT_EQ(out.leases(), 2u);
  EXPECT_TRUE(out.pinned());
  EXPECT_EQ(out.created_unix_ms(), 1000u);
  EXPECT_EQ(out.last_access_unix_ms(), 2000u);
  EXPECT_EQ(out.hits(), 5u);
  // 4 bytes a token, little-endian.
  ASSERT_EQ(out.tokens().size(), info.tokens.size() * 4);
  EXPECT_EQ(out.tokens().substr(0, 8), std::string("\x01\0\0\0\x02\0\0\0", 8));
  ASSERT_OK_AND_ASSIGN(proto::TokenView tokens, proto::TokensFromProto(out.tokens(), "tokens"));
  EXPECT_EQ(std::vector<uint32_t>(tokens.span().begin(), tokens.span().end()), info.tokens);
}

TEST(BlobInfoToProtoTest, NoParentNoTokens) {
  core::BlobInfo info = SampleInfo();
  info.parent.reset();
  info.tokens.clear();
  v1::BlobInfo out;
  BlobInfoToProto(info, &out);
  EXPECT_FALSE(out.has_parent());
  EXPECT_TRUE(out.tokens().empty());
}

TEST(ListToProtoTest, KeepsOrderAndToken) {
  core::ListReply reply;
  reply.blobs.push_back(SampleInfo());
  reply.blobs.push_back(SampleInfo());
  reply.blobs[1].key = Key(0xAC, 0);
  reply.blobs[0].tokens.clear();
  reply.blobs[1].tokens.clear();
  reply.next_page_token = "v1:abc";
  v1::ListResponse out;
  ListToProto(reply, &out);
  ASSERT_EQ(out.blobs_size(), 2);
  EXPECT_EQ(KeyOf(out.blobs(0).key()), Key(0xAB, 0xCD));
  EXPECT_EQ(KeyOf(out.blobs(1).key()), Key(0xAC, 0));
  EXPECT_EQ(out.next_page_token(), "v1:abc");
}

TEST(TiersToProtoTest, DramStatsIndexAndEngineCounts) {
  core::NodeTiers tiers;
  tiers.dram = tiering::TierStats{.capacity_bytes = 1000,
                                  .used_bytes = 300,
                                  .blobs = 3,
                                  .hits = 4,
                                  .misses = 5,
                                  .evictions = 6,
                                  .promotions = 7,
                                  .demotions = 8};
  tiers.index = radix::RadixTreeStats{.roots = 1,
                                      .nodes = 2,
                                      .leaves = 3,
                                      .pages = 4,
                                      .token_bytes = 5,
                                      .index_bytes = 6,
                                      .pinned_nodes = 7};
  tiers.namespaces = 11;
  tiers.blobs = 12;
  tiers.unlinked_blobs = 13;
  tiers.token_only_blobs = 14;
  tiers.pending_puts = 15;
  tiers.leases = 16;
  tiers.matches = 17;
  tiers.matched_pages = 18;
  tiers.queried_pages = 19;
  tiers.draining = true;
  v1::TiersResponse out;
  TiersToProto(tiers, &out);
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
  EXPECT_EQ(out.engine().pending_puts(), 15u);
  EXPECT_EQ(out.engine().leases(), 16u);
  EXPECT_EQ(out.engine().matches(), 17u);
  EXPECT_EQ(out.engine().matched_pages(), 18u);
  EXPECT_EQ(out.engine().queried_pages(), 19u);
  EXPECT_TRUE(out.engine().draining());
}

TEST(TiersToProtoTest, PagesLookupsByPhaseAndCurves) {
  core::NodeTiers tiers;
  tiers.dram = tiering::TierStats{.capacity_bytes = 4096};
  tiers.ssd = tiering::TierStats{.capacity_bytes = 1 << 20};
  tiers.dram_pages = 21;
  tiers.ssd_pages = 22;
  tiers.text_pages = 23;
  for (int i = 0; i < core::kLookupPhases; ++i) {
    const uint64_t base = 100 * (i + 1);
    tiers.lookups[i] = core::LookupCounts{.lookups = base + 1,
                                          .queried_pages = base + 20,
                                          .dram_hit_pages = base + 2,
                                          .ssd_hit_pages = 3,
                                          .text_hit_pages = 4,
                                          .miss_pages = 11};
  }
  tiers.mrc.points = {{1024, 0.25}, {2048, 0.5}, {4096, 0.75}};
  tiers.mrc.accesses = 500;
  tiers.mrc.sampled_accesses = 50;
  tiers.mrc.sample_rate = 0.1;
  tiers.mrc.working_set_bytes = 8192;
  tiers.curves.push_back(tiering::mrc::TierCurve{.tier = "dram",
                                                 .capacity_bytes = 4096,
                                                 .expected_hit_ratio = 0.75,
                                                 .points = tiers.mrc.points,
                                                 .recommended = {2048, 0.5},
                                                 .advice = "shrink dram"});
  tiers.curves.push_back(tiering::mrc::TierCurve{.tier = "ssd", .capacity_bytes = 1 << 20});
  tiers.curves.push_back(tiering::mrc::TierCurve{.tier = "text", .capacity_bytes = 77});
  tiers.curves.push_back(tiering::mrc::TierCurve{.tier = "tape"});  // no wire value: left out
  tiers.token_bytes_per_kv_byte = 0.125;

  v1::TiersResponse out;
  TiersToProto(tiers, &out);
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

TEST(TiersToProtoTest, NoLookupsYetStillListsEveryPhase) {
  v1::TiersResponse out;
  TiersToProto(core::NodeTiers{}, &out);
  ASSERT_EQ(out.lookups_size(), 3);
  EXPECT_EQ(out.lookups(0).phase(), v1::PHASE_PREFILL);
  EXPECT_EQ(out.lookups(2).phase(), v1::PHASE_DECODE);
  EXPECT_EQ(out.lookups(0).lookups(), 0u);
  EXPECT_EQ(out.mrc().points_size(), 0);
  EXPECT_EQ(out.curves_size(), 0);
}

TEST(CurvePointsToProtoTest, ThinsEvenlyKeepingBothEnds) {
  std::vector<tiering::mrc::CurvePoint> points;
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

TEST(CurvePointsToProtoTest, AdviceIsCutAtACharacterBoundary) {
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

TEST(EvictToProtoTest, CopiesFields) {
  v1::EvictResponse out;
  EvictToProto(core::EvictReply{.bytes_freed = 1 << 20, .pages_evicted = 9, .blobs_unlinked = 2},
               &out);
  EXPECT_EQ(out.bytes_freed(), 1u << 20);
  EXPECT_EQ(out.pages_evicted(), 9u);
  EXPECT_EQ(out.blobs_unlinked(), 2u);
}

}  // namespace
}  // namespace strata::store::rpc
