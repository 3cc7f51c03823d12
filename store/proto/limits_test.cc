// The limits of limits.h keep every message under kMaxMessageBytes: each test
// builds the largest message a limit allows (every varint at its longest, token
// fields at 4 bytes a token) and measures it.
#include "strata/proto/limits.h"

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

#include "gtest/gtest.h"

#include "strata/proto/protocol_internal.h"
#include "strata/proto/repeated_convert.h"
#include "strata/radix/kv_layout.h"
#include "strata/radix/namespace.h"

namespace strata::proto {
namespace {

constexpr uint32_t kU32Max = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
// Byte offsets and lengths inside a blob stay below 2^50: a blob has at most
// kMaxChunksPerBlob (2^20) chunks of at most kMaxPageBytes (2^30) bytes.
constexpr uint64_t kMaxBlobOffset = (uint64_t{1} << 50) - 1;

static_assert(kMaxChunksPerBlob * radix::kMaxPageBytes - 1 <= kMaxBlobOffset);
// One grant's layer ranges always fit one FETCH.
static_assert(kMaxFetchRanges >= radix::kMaxLayers);

void FillMaxNamespace(v1::Namespace* ns) {
  ns->set_tenant(std::string(radix::kMaxTenantBytes, 't'));
  ns->set_model(std::string(radix::kMaxModelBytes, 'm'));
  v1::KvLayout* l = ns->mutable_layout();
  l->set_num_layers(kU32Max);
  l->set_num_kv_heads(kU32Max);
  l->set_head_dim(kU32Max);
  l->set_dtype(static_cast<v1::DType>(std::numeric_limits<int32_t>::max()));
  l->set_page_tokens(kU32Max);
  l->set_format(static_cast<v1::KvFormat>(std::numeric_limits<int32_t>::max()));
  l->set_tp_rank(kU32Max);
  l->set_tp_world(kU32Max);
}

void FillMaxKey(v1::BlobKey* key) {
  key->set_hi(kU64Max);
  key->set_lo(kU64Max);
}

void ExpectFits(const char* what, const google::protobuf::Message& message) {
  const size_t bytes = message.ByteSizeLong();
  std::printf("%-40s %10zu bytes (%.2f MiB)\n", what, bytes, bytes / 1048576.0);
  EXPECT_LE(bytes, static_cast<size_t>(kMaxMessageBytes)) << what;
}

TEST(LimitsTest, LargestBeginPutRequestFits) {
  v1::BeginPutRequest request;
  FillMaxNamespace(request.mutable_ns());
  FillMaxKey(request.mutable_parent()->mutable_key());
  request.mutable_parent()->set_pages(kU32Max);
  request.mutable_tokens()->assign(kMaxTokensPerRequest * kTokenIdBytes, '\xff');
  request.set_bytes(kU64Max);
  request.mutable_chunk_checksums()->Resize(static_cast<int>(kMaxChunksPerBlob), kU64Max);
  FillMaxKey(request.mutable_key());
  ExpectFits("BeginPutRequest", request);
}

TEST(LimitsTest, LargestMatchRequestFits) {
  v1::MatchRequest request;
  FillMaxNamespace(request.mutable_ns());
  request.mutable_tokens()->assign(kMaxTokensPerRequest * kTokenIdBytes, '\xff');
  ExpectFits("MatchRequest", request);
}

TEST(LimitsTest, LargestMatchResponseFits) {
  v1::MatchResponse response;
  response.set_matched_pages(kU32Max);
  response.set_truncated(true);
  for (size_t i = 0; i < kMaxMatchSegments; ++i) {
    v1::Segment* s = response.add_segments();
    FillMaxKey(s->mutable_blob());
    s->set_blob_page_offset(kU32Max);
    s->set_page_count(kU32Max);
    s->set_seq_page_begin(kU32Max);
    s->set_blob_pages(kU32Max);
    s->set_tier(v1::TIER_TEXT);
  }
  // The TEXT segments' tokens, kMaxMatchTextTokens between them (spread evenly).
  const size_t per_segment = kMaxMatchTextTokens / kMaxMatchSegments;
  for (v1::Segment& s : *response.mutable_segments()) {
    s.mutable_tokens()->assign(per_segment * kTokenIdBytes, '\xff');
  }
  ExpectFits("MatchResponse", response);
}

TEST(LimitsTest, LargestPrefetchRequestFits) {
  v1::PrefetchRequest request;
  FillMaxNamespace(request.mutable_ns());
  request.mutable_tokens()->assign(kMaxTokensPerRequest * kTokenIdBytes, '\xff');
  ExpectFits("PrefetchRequest", request);
}

void FillMaxRebuildTask(v1::RebuildTask* task) {
  task->set_task_id(kU64Max);
  FillMaxNamespace(task->mutable_ns());
  FillMaxKey(task->mutable_key());
  FillMaxKey(task->mutable_parent()->mutable_key());
  task->mutable_parent()->set_pages(kU32Max);
  task->set_first_page(kU32Max);
  task->set_pages(kU32Max);
  task->mutable_sequence_tokens()->assign(kMaxRebuildSequenceTokens * kTokenIdBytes, '\xff');
  task->mutable_chunk_checksums()->Resize(static_cast<int>(kMaxChunksPerBlob), kU64Max);
  task->set_expires_in_ms(kU64Max);
}

TEST(LimitsTest, LargestPullRebuildTasksResponseFits) {
  // The adapter stops taking tasks once they reach kPullResponseFillBytes: the worst answer
  // is just under that much, then one more task of the largest size.
  v1::PullRebuildTasksResponse response;
  FillMaxRebuildTask(response.add_tasks());
  const size_t largest = response.ByteSizeLong();
  ExpectFits("RebuildTask (one)", response);
  v1::RebuildTask* filler = response.add_tasks();
  filler->mutable_sequence_tokens()->assign(kPullResponseFillBytes - 1, '\xff');
  ExpectFits("PullRebuildTasksResponse", response);
  EXPECT_LE(kPullResponseFillBytes + largest + 16, static_cast<size_t>(kMaxMessageBytes));
}

TEST(LimitsTest, LargestReadRequestFits) {
  v1::ReadRequest request;
  FillMaxNamespace(request.mutable_ns());
  for (size_t i = 0; i < kMaxReadRanges; ++i) {
    v1::ReadRange* r = request.add_ranges();
    FillMaxKey(r->mutable_blob());
    r->set_first_page(kU32Max);
    r->set_num_pages(kU32Max);
    r->set_layer_begin(kU32Max);
    r->set_layer_end(kU32Max);
  }
  request.set_lease_ttl_ms(kU32Max);
  ExpectFits("ReadRequest", request);
}

TEST(LimitsTest, LargestReadResponseFits) {
  // kMaxChunksPerRead chunks, each its own layer range (num_pages = 1), spread
  // over kMaxReadRanges grants: the most ranges and checksums one Read allows.
  v1::ReadResponse response;
  response.set_lease_id(kU64Max);
  response.set_expires_in_ms(kU64Max);
  response.mutable_data_plane()->set_ucx_address(std::string(255, 'h') + ":65535");
  const size_t per_grant = kMaxChunksPerRead / kMaxReadRanges;
  ASSERT_LE(per_grant, radix::kMaxLayers);
  for (size_t g = 0; g < kMaxReadRanges; ++g) {
    v1::ReadGrant* grant = response.add_grants();
    FillMaxKey(grant->mutable_blob());
    grant->set_chunk_bytes(radix::kMaxPageBytes);
    grant->set_blob_bytes(kMaxBlobOffset);
    grant->set_arena_offset(kU64Max);
    for (size_t i = 0; i < per_grant; ++i) {
      v1::ByteRange* r = grant->add_layer_ranges();
      r->set_offset(kMaxBlobOffset);
      r->set_length(kMaxBlobOffset);
    }
    grant->mutable_chunk_checksums()->Resize(static_cast<int>(per_grant), kU64Max);
  }
  ExpectFits("ReadResponse", response);
}

TEST(LimitsTest, LargestStatResponseFits) {
  v1::StatResponse response;
  v1::BlobInfo* info = response.mutable_blob();
  FillMaxNamespace(info->mutable_ns());
  info->mutable_tokens()->assign(kMaxTokensPerRequest * kTokenIdBytes, '\xff');
  ExpectFits("StatResponse", response);
}

TEST(LimitsTest, LargestListResponseFits) {
  v1::ListResponse response;
  for (uint32_t i = 0; i < kMaxListLimit; ++i) {
    v1::BlobInfo* info = response.add_blobs();
    FillMaxKey(info->mutable_key());
    FillMaxNamespace(info->mutable_ns());
    info->mutable_namespace_hash()->set_hi(kU64Max);
    info->mutable_namespace_hash()->set_lo(kU64Max);
    FillMaxKey(info->mutable_parent()->mutable_key());
    info->mutable_parent()->set_pages(kU32Max);
    info->mutable_start_hash()->set_hi(kU64Max);
    info->mutable_start_hash()->set_lo(kU64Max);
    info->set_first_page(kU32Max);
    info->set_pages(kU32Max);
    info->set_bytes(kU64Max);
    info->set_checksum(kU64Max);
    for (int t = 0; t < 4; ++t) info->add_tiers(v1::TIER_TEXT);
    info->set_pages_indexed(kU32Max);
    info->set_leases(kU32Max);
    info->set_pinned(true);
    info->set_hits(kU64Max);
    info->set_created_unix_ms(kU64Max);
    info->set_last_access_unix_ms(kU64Max);
  }
  response.set_next_page_token(std::string(16, '\xff'));
  ExpectFits("ListResponse", response);
}

void FillMaxPoints(google::protobuf::RepeatedPtrField<v1::CurvePoint>* points) {
  for (size_t i = 0; i < kMaxCurvePoints; ++i) {
    v1::CurvePoint* point = points->Add();
    point->set_capacity_bytes(kU64Max);
    point->set_hit_ratio(0.123456789);
  }
}

TEST(LimitsTest, LargestTiersResponseFits) {
  v1::TiersResponse response;
  for (v1::Tier tier : {v1::TIER_HBM, v1::TIER_DRAM, v1::TIER_SSD}) {
    v1::TierStats* stats = response.add_tiers();
    stats->set_tier(tier);
    stats->set_capacity_bytes(kU64Max);
    stats->set_used_bytes(kU64Max);
    stats->set_free_bytes(kU64Max);
    stats->set_blobs(kU64Max);
    stats->set_hits(kU64Max);
    stats->set_misses(kU64Max);
    stats->set_evictions(kU64Max);
    stats->set_promotions(kU64Max);
    stats->set_demotions(kU64Max);
    stats->set_pages(kU64Max);
  }
  for (v1::Phase phase : {v1::PHASE_PREFILL, v1::PHASE_MIDFILL, v1::PHASE_DECODE}) {
    v1::LookupStats* lookups = response.add_lookups();
    lookups->set_phase(phase);
    lookups->set_lookups(kU64Max);
    lookups->set_queried_pages(kU64Max);
    lookups->set_dram_hit_pages(kU64Max);
    lookups->set_ssd_hit_pages(kU64Max);
    lookups->set_text_hit_pages(kU64Max);
    lookups->set_miss_pages(kU64Max);
  }
  FillMaxPoints(response.mutable_mrc()->mutable_points());
  response.mutable_mrc()->set_accesses(kU64Max);
  response.mutable_mrc()->set_sampled_accesses(kU64Max);
  response.mutable_mrc()->set_sample_rate(1.0);
  response.mutable_mrc()->set_working_set_bytes(kU64Max);
  for (v1::Tier tier : {v1::TIER_HBM, v1::TIER_DRAM, v1::TIER_SSD, v1::TIER_TEXT}) {
    v1::TierCurve* curve = response.add_curves();
    curve->set_tier(tier);
    curve->set_capacity_bytes(kU64Max);
    curve->set_expected_hit_ratio(0.5);
    FillMaxPoints(curve->mutable_points());
    curve->mutable_recommended()->set_capacity_bytes(kU64Max);
    curve->mutable_recommended()->set_hit_ratio(0.5);
    curve->set_advice(std::string(kMaxAdviceBytes, 'a'));
  }
  response.set_token_bytes_per_kv_byte(0.001);
  ExpectFits("TiersResponse", response);
}

}  // namespace
}  // namespace strata::proto
