// The conversions of tiers and rebuild from text: TEXT match segments with their tokens (and
// the TEXT-token truncation), Prefetch, RequestRebuild, PullRebuildTasks (requests and
// tasks), the SSD / TEXT / rebuild-queue statistics of Tiers, and Evict's new counts.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/proto/limits.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/repeated_convert.h"
#include "strata/radix/namespace.h"
#include "strata/store/rpc/reply_convert.h"
#include "strata/store/rpc/request_convert.h"

namespace strata::store::rpc {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1893456000);

radix::Namespace SmallNamespace() {
  return radix::Namespace::Create("acme", "org/m",
                                  radix::KvLayout{.num_layers = 2,
                                                  .num_kv_heads = 1,
                                                  .head_dim = 8,
                                                  .dtype = radix::DType::kBFloat16,
                                                  .page_tokens = 2,
                                                  .format = radix::KvFormat::kKeyValue,
                                                  .tp_rank = 0,
                                                  .tp_world = 1})
      .value();
}

radix::BlobKey Key(uint64_t hi, uint64_t lo) {
  return radix::BlobKey{.hash = {.hi = hi, .lo = lo}};
}

radix::BlobKey KeyOf(const v1::BlobKey& key) {
  return radix::BlobKey{.hash = {.hi = key.hi(), .lo = key.lo()}};
}

std::vector<radix::TokenId> TokensOf(const std::string& bytes) {
  absl::StatusOr<proto::TokenView> view = proto::TokensFromProto(bytes, "tokens");
  EXPECT_TRUE(view.ok()) << view.status();
  if (!view.ok()) return {};
  return std::vector<radix::TokenId>(view->span().begin(), view->span().end());
}

void ExpectInvalid(const absl::Status& status, std::string_view message) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(std::string(status.message()), std::string(message));
}

// Pages [0, 2) in DRAM, [2, 4) TEXT (tokens 10..13), [4, 5) TEXT (tokens 20, 21).
core::MatchReply DramThenText() {
  core::MatchReply reply;
  reply.matched_pages = 5;
  reply.segments = {
      {.blob = Key(1, 1),
       .blob_page_offset = 0,
       .page_count = 2,
       .seq_page_begin = 0,
       .blob_pages = 2,
       .tier = core::TierState::kDram},
      {.blob = Key(2, 2),
       .blob_page_offset = 0,
       .page_count = 2,
       .seq_page_begin = 2,
       .blob_pages = 3,
       .tier = core::TierState::kText,
       .tokens = {10, 11, 12, 13}},
      {.blob = Key(3, 3),
       .blob_page_offset = 1,
       .page_count = 1,
       .seq_page_begin = 4,
       .blob_pages = 2,
       .tier = core::TierState::kText,
       .tokens = {20, 21}},
  };
  return reply;
}

TEST(TextMatchToProtoTest, TextSegmentsCarryTheirTokensOthersNone) {
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
  core::MatchReply odd = DramThenText();
  odd.segments[0].tokens = {1, 2, 3, 4};
  MatchToProto(odd, &out);
  EXPECT_TRUE(out.segments(0).tokens().empty());
}

TEST(TextMatchToProtoTest, TruncatesBeforeTheSegmentPassingTheTextTokenLimit) {
  v1::MatchResponse out;
  // 4 + 2 tokens fit in 6; in 5 the last segment goes.
  MatchToProto(DramThenText(), &out, proto::kMaxMatchSegments, /*max_text_tokens=*/6);
  EXPECT_FALSE(out.truncated());
  EXPECT_EQ(out.segments_size(), 3);
  MatchToProto(DramThenText(), &out, proto::kMaxMatchSegments, /*max_text_tokens=*/5);
  EXPECT_TRUE(out.truncated());
  ASSERT_EQ(out.segments_size(), 2);
  EXPECT_EQ(out.matched_pages(), 4u);
  // Below the first TEXT segment's 4: only the DRAM segment stays.
  MatchToProto(DramThenText(), &out, proto::kMaxMatchSegments, /*max_text_tokens=*/3);
  EXPECT_TRUE(out.truncated());
  ASSERT_EQ(out.segments_size(), 1);
  EXPECT_EQ(out.matched_pages(), 2u);
  // The segment limit still applies with the token limit.
  MatchToProto(DramThenText(), &out, /*max_segments=*/1, /*max_text_tokens=*/100);
  EXPECT_TRUE(out.truncated());
  EXPECT_EQ(out.segments_size(), 1);
}

TEST(PrefetchRequestFromProtoTest, NamespaceAndTokens) {
  v1::PrefetchRequest request;
  proto::ToProto(SmallNamespace(), request.mutable_ns());
  proto::TokensToProto(std::vector<radix::TokenId>{1, 2, 3, 4, 5}, request.mutable_tokens());
  ASSERT_OK_AND_ASSIGN(PrefetchArgs args, PrefetchRequestFromProto(request));
  EXPECT_EQ(args.ns, SmallNamespace());
  EXPECT_EQ(std::vector<radix::TokenId>(args.tokens.span().begin(), args.tokens.span().end()),
            (std::vector<radix::TokenId>{1, 2, 3, 4, 5}));

  request.mutable_tokens()->push_back('\x01');
  ExpectInvalid(PrefetchRequestFromProto(request).status(),
                "tokens: 21 bytes is not a whole number of 4-byte token ids");
  v1::PrefetchRequest no_ns;
  EXPECT_EQ(PrefetchRequestFromProto(no_ns).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RequestRebuildFromProtoTest, KeyRequired) {
  v1::RequestRebuildRequest request;
  ExpectInvalid(RequestRebuildFromProto(request).status(),
                "key: missing (the all-zero blob key is reserved for unset)");
  request.mutable_key()->set_hi(7);
  request.mutable_key()->set_lo(8);
  request.set_with_prefix(true);
  ASSERT_OK_AND_ASSIGN(RebuildRequestArgs args, RequestRebuildFromProto(request));
  EXPECT_EQ(args.key, Key(7, 8));
  EXPECT_TRUE(args.with_prefix);
}

TEST(PullRebuildTasksFromProtoTest, Limits) {
  v1::PullRebuildTasksRequest request;
  ExpectInvalid(PullRebuildTasksFromProto(request).status(), "max_tasks: must be >= 1");
  request.set_max_tasks(proto::kMaxRebuildTasksPerPull + 1);
  ExpectInvalid(PullRebuildTasksFromProto(request).status(),
                "max_tasks: 1025 exceeds the limit of 1024");
  request.set_max_tasks(proto::kMaxRebuildTasksPerPull);
  request.set_wait_ms(proto::kMaxRebuildWaitMs + 1);
  ExpectInvalid(PullRebuildTasksFromProto(request).status(),
                "wait_ms: 60001 exceeds the limit of 60000");
  request.set_wait_ms(proto::kMaxRebuildWaitMs);
  ASSERT_OK_AND_ASSIGN(PullRebuildTasksArgs args, PullRebuildTasksFromProto(request));
  EXPECT_EQ(args.max_tasks, 1024u);
  EXPECT_EQ(args.wait, absl::Seconds(60));
  request.set_max_tasks(1);
  request.set_wait_ms(0);
  ASSERT_OK_AND_ASSIGN(args, PullRebuildTasksFromProto(request));
  EXPECT_EQ(args.wait, absl::ZeroDuration());
}

TEST(RebuildRepliesToProtoTest, PrefetchAndRequestRebuild) {
  v1::PrefetchResponse prefetch;
  PrefetchToProto(
      core::PrefetchReply{
          .matched_pages = 9, .resident_pages = 4, .promotions = 2, .rebuilds_queued = 3},
      &prefetch);
  EXPECT_EQ(prefetch.matched_pages(), 9u);
  EXPECT_EQ(prefetch.resident_pages(), 4u);
  EXPECT_EQ(prefetch.promotions(), 2u);
  EXPECT_EQ(prefetch.rebuilds_queued(), 3u);

  v1::RequestRebuildResponse rebuild;
  RebuildRequestToProto(core::RebuildRequestReply{.queued = 5, .already_queued = 6, .resident = 7},
                        &rebuild);
  EXPECT_EQ(rebuild.queued(), 5u);
  EXPECT_EQ(rebuild.already_queued(), 6u);
  EXPECT_EQ(rebuild.resident(), 7u);
}

TEST(RebuildTaskToProtoTest, EveryField) {
  core::RebuildTask task;
  task.task_id = 41;
  task.ns = SmallNamespace();
  task.key = Key(0xA, 0xB);
  task.parent = core::BlobParent{.key = Key(0xC, 0xD), .pages = 2};
  task.first_page = 2;
  task.pages = 1;
  task.sequence_tokens = {1, 2, 3, 4, 5, 6};
  task.checksums = {100, 200};
  task.deadline = kNow + absl::Milliseconds(29500);

  v1::RebuildTask out;
  RebuildTaskToProto(task, kNow, &out);
  EXPECT_EQ(out.task_id(), 41u);
  ASSERT_OK_AND_ASSIGN(radix::Namespace ns, proto::NamespaceFromProto(out.ns(), "ns"));
  EXPECT_EQ(ns, SmallNamespace());
  EXPECT_EQ(KeyOf(out.key()), Key(0xA, 0xB));
  ASSERT_TRUE(out.has_parent());
  EXPECT_EQ(KeyOf(out.parent().key()), Key(0xC, 0xD));
  EXPECT_EQ(out.parent().pages(), 2u);
  EXPECT_EQ(out.first_page(), 2u);
  EXPECT_EQ(out.pages(), 1u);
  EXPECT_EQ(TokensOf(out.sequence_tokens()), task.sequence_tokens);
  EXPECT_EQ(std::vector<uint64_t>(out.chunk_checksums().begin(), out.chunk_checksums().end()),
            task.checksums);
  EXPECT_EQ(out.expires_in_ms(), 29500u);

  // From page 0: no parent; a past deadline is 0 ms, never negative.
  task.parent.reset();
  task.deadline = kNow - absl::Seconds(1);
  RebuildTaskToProto(task, kNow, &out);
  EXPECT_FALSE(out.has_parent());
  EXPECT_EQ(out.expires_in_ms(), 0u);
}

TEST(TiersToProtoTest, SsdTextAndRebuildQueue) {
  core::NodeTiers tiers;
  tiers.dram = tiering::TierStats{.capacity_bytes = 1000, .used_bytes = 100, .blobs = 1};
  tiers.ssd = tiering::TierStats{.capacity_bytes = 5000,
                                 .used_bytes = 2000,
                                 .blobs = 4,
                                 .hits = 5,
                                 .misses = 6,
                                 .evictions = 7,
                                 .promotions = 8,
                                 .demotions = 9};
  tiers.text = core::TextTierStats{.capacity_bytes = 64,
                                   .used_bytes = 32,
                                   .blobs = 3,
                                   .drops = 4,
                                   .deletions = 5,
                                   .rebuilds = 6};
  tiers.rebuild = core::RebuildQueueStats{
      .queued = 1, .in_flight = 2, .requested = 3, .completed = 4, .expired = 5, .dropped = 6};
  v1::TiersResponse out;
  TiersToProto(tiers, &out);
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
  tiers.ssd.reset();
  TiersToProto(tiers, &out);
  ASSERT_EQ(out.tiers_size(), 1);
  EXPECT_EQ(out.tiers(0).tier(), v1::TIER_DRAM);
}

TEST(EvictToProtoTest, DemotedAndDropped) {
  v1::EvictResponse out;
  EvictToProto(core::EvictReply{.bytes_freed = 4096,
                                .pages_evicted = 0,
                                .blobs_unlinked = 0,
                                .blobs_demoted = 3,
                                .blobs_dropped = 2},
               &out);
  EXPECT_EQ(out.bytes_freed(), 4096u);
  EXPECT_EQ(out.blobs_demoted(), 3u);
  EXPECT_EQ(out.blobs_dropped(), 2u);
}

TEST(TierStateFromProtoTest, EvictAcceptsText) {
  ASSERT_OK_AND_ASSIGN(core::TierState text, TierStateFromProto(v1::TIER_TEXT, "tier"));
  EXPECT_EQ(text, core::TierState::kText);
  ASSERT_OK_AND_ASSIGN(core::TierState ssd, TierStateFromProto(v1::TIER_SSD, "tier"));
  EXPECT_EQ(ssd, core::TierState::kSsd);
  ExpectInvalid(TierStateFromProto(v1::TIER_UNSPECIFIED, "tier").status(), "tier: missing");
  ExpectInvalid(TierStateFromProto(17, "tier").status(), "tier: unknown value 17");
}

}  // namespace
}  // namespace strata::store::rpc
