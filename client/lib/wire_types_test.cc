// The client's conversions of node answers that carry tiers and rebuild tasks: TEXT segments
// with their tokens, the TEXT tier and rebuild queue of Tiers, rebuild tasks (and the
// INTERNAL for tasks whose shape does not add up), the per-tier pages, lookups by phase and
// miss-ratio curves of Tiers, and phases to the wire.
#include "client/lib/wire_types.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/repeated_convert.h"

namespace strata::client_internal {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1893456000);

Namespace TestNamespace() {
  return Namespace::Create("acme", "org/m",
                           KvLayout{.num_layers = 2,
                                    .num_kv_heads = 1,
                                    .head_dim = 4,
                                    .dtype = DType::kFloat16,
                                    .page_tokens = 2,
                                    .format = KvFormat::kKeyValue,
                                    .tp_rank = 0,
                                    .tp_world = 1})
      .value();
}

TEST(WireTypesTest, TextSegmentsKeepTheirTokens) {
  v1::MatchResponse response;
  response.set_matched_pages(3);
  v1::Segment* dram = response.add_segments();
  dram->mutable_blob()->set_hi(1);
  dram->set_page_count(1);
  dram->set_blob_pages(1);
  dram->set_tier(v1::TIER_DRAM);
  v1::Segment* text = response.add_segments();
  text->mutable_blob()->set_hi(2);
  text->set_page_count(2);
  text->set_seq_page_begin(1);
  text->set_blob_pages(2);
  text->set_tier(v1::TIER_TEXT);
  proto::TokensToProto(std::vector<TokenId>{5, 6, 7, 8}, text->mutable_tokens());

  ASSERT_OK_AND_ASSIGN(MatchResult match, MatchResultFromProto(response));
  ASSERT_EQ(match.segments.size(), 2u);
  EXPECT_EQ(match.segments[0].tier, Tier::kDram);
  EXPECT_TRUE(match.segments[0].tokens.empty());
  EXPECT_EQ(match.segments[1].tier, Tier::kText);
  EXPECT_EQ(match.segments[1].tokens, (std::vector<TokenId>{5, 6, 7, 8}));
  EXPECT_EQ(match.ReadablePages(), 1u);

  // Ragged tokens from a node are its bug: INTERNAL naming the field.
  text->mutable_tokens()->push_back('\x01');
  const auto ragged = MatchResultFromProto(response);
  EXPECT_CODE(ragged, absl::StatusCode::kInternal);
  EXPECT_NE(ragged.status().message().find("segments[1].tokens"), std::string::npos)
      << ragged.status();
}

TEST(WireTypesTest, TiersCarryTextTierAndRebuildQueue) {
  v1::TiersResponse response;
  v1::TierStats* dram = response.add_tiers();
  dram->set_tier(v1::TIER_DRAM);
  v1::TierStats* ssd = response.add_tiers();
  ssd->set_tier(v1::TIER_SSD);
  ssd->set_capacity_bytes(1 << 30);
  ssd->set_demotions(3);
  v1::TextTierStats* text = response.mutable_text();
  text->set_capacity_bytes(64);
  text->set_used_bytes(32);
  text->set_blobs(3);
  text->set_drops(4);
  text->set_deletions(5);
  text->set_rebuilds(6);
  v1::RebuildQueueStats* rebuild = response.mutable_rebuild();
  rebuild->set_queued(1);
  rebuild->set_in_flight(2);
  rebuild->set_requested(3);
  rebuild->set_completed(4);
  rebuild->set_expired(5);
  rebuild->set_dropped(6);
  ASSERT_OK_AND_ASSIGN(NodeTiers tiers, NodeTiersFromProto(response));
  ASSERT_EQ(tiers.tiers.size(), 2u);
  EXPECT_EQ(tiers.tiers[1].tier, Tier::kSsd);
  EXPECT_EQ(tiers.tiers[1].capacity_bytes, 1u << 30);
  EXPECT_EQ(tiers.tiers[1].demotions, 3u);
  EXPECT_EQ(tiers.text.capacity_bytes, 64u);
  EXPECT_EQ(tiers.text.used_bytes, 32u);
  EXPECT_EQ(tiers.text.blobs, 3u);
  EXPECT_EQ(tiers.text.drops, 4u);
  EXPECT_EQ(tiers.text.deletions, 5u);
  EXPECT_EQ(tiers.text.rebuilds, 6u);
  EXPECT_EQ(tiers.rebuild.queued, 1u);
  EXPECT_EQ(tiers.rebuild.in_flight, 2u);
  EXPECT_EQ(tiers.rebuild.requested, 3u);
  EXPECT_EQ(tiers.rebuild.completed, 4u);
  EXPECT_EQ(tiers.rebuild.expired, 5u);
  EXPECT_EQ(tiers.rebuild.dropped, 6u);
}

TEST(WireTypesTest, TiersCarryPagesLookupsAndCurves) {
  v1::TiersResponse response;
  v1::TierStats* dram = response.add_tiers();
  dram->set_tier(v1::TIER_DRAM);
  dram->set_capacity_bytes(4096);
  dram->set_pages(11);
  response.mutable_text()->set_pages(13);
  const v1::Phase phases[] = {v1::PHASE_PREFILL, v1::PHASE_MIDFILL, v1::PHASE_DECODE,
                              static_cast<v1::Phase>(9)};
  for (int i = 0; i < 4; ++i) {
    v1::LookupStats* l = response.add_lookups();
    l->set_phase(phases[i]);
    l->set_lookups(10 * i + 1);
    l->set_queried_pages(10 * i + 9);
    l->set_dram_hit_pages(10 * i + 2);
    l->set_ssd_hit_pages(10 * i + 3);
    l->set_text_hit_pages(10 * i + 1);
    l->set_miss_pages(10 * i + 3);
  }
  v1::MissRatioCurve* mrc = response.mutable_mrc();
  for (uint64_t c : {1024, 2048, 4096}) {
    v1::CurvePoint* p = mrc->add_points();
    p->set_capacity_bytes(c);
    p->set_hit_ratio(static_cast<double>(c) / 8192);
  }
  mrc->set_accesses(1000);
  mrc->set_sampled_accesses(10);
  mrc->set_sample_rate(0.01);
  mrc->set_working_set_bytes(8192);
  v1::TierCurve* curve = response.add_curves();
  curve->set_tier(v1::TIER_DRAM);
  curve->set_capacity_bytes(4096);
  curve->set_expected_hit_ratio(0.5);
  *curve->mutable_points() = mrc->points();
  curve->mutable_recommended()->set_capacity_bytes(8192);
  curve->mutable_recommended()->set_hit_ratio(0.75);
  curve->set_advice("grow dram");
  v1::TierCurve* text = response.add_curves();
  text->set_tier(v1::TIER_TEXT);                               // no recommendation
  response.add_curves()->set_tier(static_cast<v1::Tier>(42));  // unknown: left out
  response.set_token_bytes_per_kv_byte(0.25);

  ASSERT_OK_AND_ASSIGN(NodeTiers tiers, NodeTiersFromProto(response));
  ASSERT_EQ(tiers.tiers.size(), 1u);
  EXPECT_EQ(tiers.tiers[0].pages, 11u);
  EXPECT_EQ(tiers.text.pages, 13u);
  ASSERT_EQ(tiers.lookups.size(), 3u);  // the unknown phase 9 is left out
  EXPECT_EQ(tiers.lookups[0].phase, LookupPhase::kPrefill);
  EXPECT_EQ(tiers.lookups[1].phase, LookupPhase::kMidfill);
  EXPECT_EQ(tiers.lookups[2].phase, LookupPhase::kDecode);
  EXPECT_EQ(tiers.lookups[2].lookups, 21u);
  EXPECT_EQ(tiers.lookups[2].queried_pages, 29u);
  EXPECT_EQ(tiers.lookups[2].dram_hit_pages, 22u);
  EXPECT_EQ(tiers.lookups[2].ssd_hit_pages, 23u);
  EXPECT_EQ(tiers.lookups[2].text_hit_pages, 21u);
  EXPECT_EQ(tiers.lookups[2].miss_pages, 23u);
  ASSERT_EQ(tiers.mrc.points.size(), 3u);
  EXPECT_EQ(tiers.mrc.points[1], (CurvePoint{2048, 0.25}));
  EXPECT_EQ(tiers.mrc.accesses, 1000u);
  EXPECT_EQ(tiers.mrc.sampled_accesses, 10u);
  EXPECT_DOUBLE_EQ(tiers.mrc.sample_rate, 0.01);
  EXPECT_EQ(tiers.mrc.working_set_bytes, 8192u);
  ASSERT_EQ(tiers.curves.size(), 2u);
  const TierCurve* d = tiers.CurveFor(Tier::kDram);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->capacity_bytes, 4096u);
  EXPECT_DOUBLE_EQ(d->expected_hit_ratio, 0.5);
  EXPECT_EQ(d->points, tiers.mrc.points);
  ASSERT_TRUE(d->recommended.has_value());
  EXPECT_EQ(*d->recommended, (CurvePoint{8192, 0.75}));
  EXPECT_EQ(d->advice, "grow dram");
  ASSERT_NE(tiers.CurveFor(Tier::kText), nullptr);
  EXPECT_FALSE(tiers.CurveFor(Tier::kText)->recommended.has_value());
  EXPECT_DOUBLE_EQ(tiers.token_bytes_per_kv_byte, 0.25);
}

// Blob of sequence page 2 (one page) continuing a parent: 6 sequence tokens, 2 checksums.
v1::RebuildTask ValidTask() {
  v1::RebuildTask task;
  task.set_task_id(9);
  proto::ToProto(TestNamespace(), task.mutable_ns());
  task.mutable_key()->set_hi(0xA);
  task.mutable_key()->set_lo(0xB);
  task.mutable_parent()->mutable_key()->set_hi(0xC);
  task.mutable_parent()->set_pages(2);
  task.set_first_page(2);
  task.set_pages(1);
  proto::TokensToProto(std::vector<TokenId>{1, 2, 3, 4, 5, 6}, task.mutable_sequence_tokens());
  task.add_chunk_checksums(100);
  task.add_chunk_checksums(200);
  task.set_expires_in_ms(30000);
  return task;
}

TEST(WireTypesTest, RebuildTaskFromProto) {
  ASSERT_OK_AND_ASSIGN(RebuildTask task, RebuildTaskFromProto(ValidTask(), kNow, "tasks[0]"));
  EXPECT_EQ(task.task_id, 9u);
  ASSERT_TRUE(task.ns.has_value());
  EXPECT_EQ(*task.ns, TestNamespace());
  EXPECT_EQ(task.key, (BlobKey{PrefixHash{0xA, 0xB}}));
  ASSERT_TRUE(task.parent.has_value());
  EXPECT_EQ(task.parent->key, (BlobKey{PrefixHash{0xC, 0}}));
  EXPECT_EQ(task.parent->pages, 2u);
  EXPECT_EQ(task.first_page, 2u);
  EXPECT_EQ(task.pages, 1u);
  EXPECT_EQ(task.sequence_tokens, (std::vector<TokenId>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(task.OwnTokens(), (std::vector<TokenId>{5, 6}));
  EXPECT_EQ(task.chunk_checksums, (std::vector<uint64_t>{100, 200}));
  EXPECT_EQ(task.deadline, kNow + absl::Seconds(30));

  v1::RebuildTask root = ValidTask();
  root.clear_parent();
  ASSERT_OK_AND_ASSIGN(task, RebuildTaskFromProto(root, kNow, "tasks[0]"));
  EXPECT_FALSE(task.parent.has_value());
  EXPECT_FALSE(task.segment_start.has_value());

  // A blob past a cluster segment start at page 1: tokens of pages [1, 3) only.
  v1::RebuildTask segment = ValidTask();
  segment.mutable_segment_start()->mutable_hash()->set_hi(0xD);
  segment.mutable_segment_start()->set_pages(1);
  proto::TokensToProto(std::vector<TokenId>{3, 4, 5, 6}, segment.mutable_sequence_tokens());
  ASSERT_OK_AND_ASSIGN(task, RebuildTaskFromProto(segment, kNow, "tasks[0]"));
  EXPECT_EQ(task.segment_start, (SegmentStart{PrefixHash{0xD, 0}, 1}));
  EXPECT_EQ(task.OwnTokens(), (std::vector<TokenId>{5, 6}));
}

TEST(WireTypesTest, MalformedRebuildTasksAreInternal) {
  const auto expect_internal = [](const v1::RebuildTask& task, const std::string& text) {
    const auto result = RebuildTaskFromProto(task, kNow, "tasks[3]");
    EXPECT_CODE(result, absl::StatusCode::kInternal);
    EXPECT_NE(result.status().message().find(text), std::string::npos) << result.status();
  };
  v1::RebuildTask task = ValidTask();
  task.clear_ns();
  expect_internal(task, "tasks[3].ns");
  task = ValidTask();
  task.clear_key();
  expect_internal(task, "tasks[3].key");
  task = ValidTask();
  task.mutable_sequence_tokens()->push_back('\x01');
  expect_internal(task, "tasks[3].sequence_tokens");
  task = ValidTask();
  task.set_pages(2);  // 4 pages of sequence, 6 tokens; checksums for 1 page
  expect_internal(task, "tasks[3]: 6 sequence tokens for pages [0, 4)");
  task = ValidTask();
  task.set_pages(0);
  expect_internal(task, "tasks[3]: 6 sequence tokens for pages [0, 2)");
  task = ValidTask();
  task.add_chunk_checksums(300);
  expect_internal(task, "tasks[3].chunk_checksums: 3, expected 2");
  task = ValidTask();
  task.mutable_segment_start()->set_pages(1);  // no hash
  expect_internal(task, "tasks[3].segment_start: page 1, no hash");
  task.mutable_segment_start()->mutable_hash()->set_lo(1);
  task.mutable_segment_start()->set_pages(3);  // after the blob's first page
  expect_internal(task, "tasks[3].segment_start: page 3 for a blob from page 2");
  task.mutable_segment_start()->set_pages(1);  // 6 tokens: pages [0, 3), not [1, 3)
  expect_internal(task, "tasks[3]: 6 sequence tokens for pages [1, 3)");
}

TEST(WireTypesTest, PrefetchAndRebuildRequestResults) {
  v1::PrefetchResponse prefetch;
  prefetch.set_matched_pages(8);
  prefetch.set_resident_pages(5);
  prefetch.set_promotions(1);
  prefetch.set_rebuilds_queued(2);
  const PrefetchResult p = PrefetchResultFromProto(prefetch);
  EXPECT_EQ(p.matched_pages, 8u);
  EXPECT_EQ(p.resident_pages, 5u);
  EXPECT_EQ(p.promotions, 1u);
  EXPECT_EQ(p.rebuilds_queued, 2u);
  v1::RequestRebuildResponse rebuild;
  rebuild.set_queued(3);
  rebuild.set_already_queued(1);
  rebuild.set_resident(2);
  const RebuildRequestResult r = RebuildRequestResultFromProto(rebuild);
  EXPECT_EQ(r.queued, 3u);
  EXPECT_EQ(r.already_queued, 1u);
  EXPECT_EQ(r.resident, 2u);
}

}  // namespace
}  // namespace strata::client_internal
