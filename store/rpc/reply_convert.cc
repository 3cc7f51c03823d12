#include "strata/store/rpc/reply_convert.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/repeated_convert.h"

namespace strata::store::rpc {
namespace {

absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

void SetDataPlane(std::string_view address, v1::DataPlaneEndpoint* out) {
  out->set_ucx_address(std::string(address));
}

}  // namespace

v1::Tier TierToProto(tiering::TierKind tier) {
  switch (tier) {
    case tiering::TierKind::kHbm:
      return v1::TIER_HBM;
    case tiering::TierKind::kDram:
      return v1::TIER_DRAM;
    case tiering::TierKind::kSsd:
      return v1::TIER_SSD;
  }
  return v1::TIER_UNSPECIFIED;  // unreachable: every enumerator is handled above
}

absl::StatusOr<tiering::TierKind> TierFromProto(int value, std::string_view field) {
  switch (value) {
    case v1::TIER_UNSPECIFIED:
      return absl::InvalidArgumentError(absl::StrCat(Sv(field), ": missing"));
    case v1::TIER_HBM:
      return tiering::TierKind::kHbm;
    case v1::TIER_DRAM:
      return tiering::TierKind::kDram;
    case v1::TIER_SSD:
      return tiering::TierKind::kSsd;
    case v1::TIER_TEXT:
      return absl::InvalidArgumentError(absl::StrCat(Sv(field), ": TIER_TEXT holds no bytes"));
    default:
      return absl::InvalidArgumentError(absl::StrCat(Sv(field), ": unknown value ", value));
  }
}

v1::Tier TierStateToProto(core::TierState state) {
  if (state == core::TierState::kText) return v1::TIER_TEXT;
  return TierToProto(core::TierKindOf(state));
}

absl::StatusOr<core::TierState> TierStateFromProto(int value, std::string_view field) {
  if (value == v1::TIER_TEXT) return core::TierState::kText;
  STRATA_ASSIGN_OR_RETURN(tiering::TierKind kind, TierFromProto(value, field));
  return core::TierStateOf(kind);
}

uint64_t ExpiresInMs(absl::Time expiry, absl::Time now) {
  if (expiry <= now) return 0;
  const absl::Duration left = expiry - now;
  if (left == absl::InfiniteDuration()) return UINT64_MAX;
  return static_cast<uint64_t>(absl::ToInt64Milliseconds(left));
}

uint64_t UnixMillis(absl::Time time) {
  if (time <= absl::UnixEpoch()) return 0;
  if (time == absl::InfiniteFuture()) return UINT64_MAX;
  return static_cast<uint64_t>(absl::ToUnixMillis(time));
}

void MatchToProto(const core::MatchReply& reply, v1::MatchResponse* out, size_t max_segments,
                  size_t max_text_tokens) {
  out->Clear();
  size_t kept = std::min(reply.segments.size(), max_segments);
  size_t text_tokens = 0;
  for (size_t i = 0; i < kept; ++i) {
    const core::MatchedSegment& segment = reply.segments[i];
    if (segment.tier != core::TierState::kText) continue;
    if (segment.tokens.size() > max_text_tokens - text_tokens) {
      kept = i;
      break;
    }
    text_tokens += segment.tokens.size();
  }
  out->mutable_segments()->Reserve(static_cast<int>(kept));
  uint32_t covered = 0;
  for (size_t i = 0; i < kept; ++i) {
    const core::MatchedSegment& segment = reply.segments[i];
    v1::Segment* s = out->add_segments();
    proto::ToProto(segment.blob, s->mutable_blob());
    s->set_blob_page_offset(segment.blob_page_offset);
    s->set_page_count(segment.page_count);
    s->set_seq_page_begin(segment.seq_page_begin);
    s->set_blob_pages(segment.blob_pages);
    s->set_tier(TierStateToProto(segment.tier));
    if (segment.tier == core::TierState::kText) {
      proto::TokensToProto(segment.tokens, s->mutable_tokens());
    }
    covered = segment.seq_page_begin + segment.page_count;
  }
  if (kept < reply.segments.size()) {
    out->set_matched_pages(covered);
    out->set_truncated(true);
  } else {
    out->set_matched_pages(reply.matched_pages);
  }
}

void BeginPutToProto(const core::BeginPutReply& reply, absl::Time now, std::string_view data_plane,
                     v1::BeginPutResponse* out) {
  out->Clear();
  out->set_exists(reply.exists);
  proto::ToProto(reply.key, out->mutable_key());
  if (reply.exists) return;
  out->set_put_id(reply.put_id);
  out->set_expires_in_ms(ExpiresInMs(reply.deadline, now));
  SetDataPlane(data_plane, out->mutable_data_plane());
}

void CommitPutToProto(const core::CommitPutReply& reply, v1::CommitPutResponse* out) {
  out->Clear();
  proto::ToProto(reply.key, out->mutable_key());
  out->set_indexed_pages(reply.indexed_pages);
}

void ReadToProto(const core::ReadReply& reply, absl::Span<const core::ReadRange> ranges,
                 const radix::KvLayout& layout, absl::Time now, std::string_view data_plane,
                 v1::ReadResponse* out) {
  DCHECK_EQ(reply.ranges.size(), ranges.size());
  out->Clear();
  out->set_lease_id(reply.lease_id);
  out->set_expires_in_ms(ExpiresInMs(reply.expiry, now));
  const uint64_t chunk_bytes = layout.BytesPerLayerPage();
  out->mutable_grants()->Reserve(static_cast<int>(reply.ranges.size()));
  for (size_t i = 0; i < reply.ranges.size() && i < ranges.size(); ++i) {
    const core::ReadRangeReply& range = reply.ranges[i];
    v1::ReadGrant* grant = out->add_grants();
    proto::ToProto(ranges[i].blob, grant->mutable_blob());
    grant->set_chunk_bytes(chunk_bytes);
    grant->mutable_layer_ranges()->Reserve(static_cast<int>(range.layer_ranges.size()));
    for (const radix::ByteRange& bytes : range.layer_ranges) {
      proto::ToProto(bytes, grant->add_layer_ranges());
    }
    proto::ChecksumsToProto(range.checksums, grant->mutable_chunk_checksums());
    grant->set_blob_bytes(range.blob_bytes);
    grant->set_arena_offset(range.arena_offset);
  }
  SetDataPlane(data_plane, out->mutable_data_plane());
}

void DeleteToProto(const core::DeleteReply& reply, v1::DeleteResponse* out) {
  out->Clear();
  out->set_pages_removed(reply.pages_removed);
  out->set_blobs_unlinked(reply.blobs_unlinked);
}

void BlobInfoToProto(const core::BlobInfo& info, v1::BlobInfo* out) {
  out->Clear();
  proto::ToProto(info.key, out->mutable_key());
  v1::Namespace* ns = out->mutable_ns();
  ns->set_tenant(info.tenant);
  ns->set_model(info.model);
  proto::ToProto(info.layout, ns->mutable_layout());
  proto::ToProto(info.namespace_hash, out->mutable_namespace_hash());
  if (info.parent.has_value()) {
    proto::ToProto(info.parent->key, out->mutable_parent()->mutable_key());
    out->mutable_parent()->set_pages(info.parent->pages);
  }
  proto::ToProto(info.start_hash, out->mutable_start_hash());
  out->set_first_page(info.first_page);
  out->set_pages(info.pages);
  out->set_bytes(info.bytes);
  out->set_checksum(info.blob_checksum);
  for (const core::TierState tier : info.tiers) out->add_tiers(TierStateToProto(tier));
  out->set_pages_indexed(info.pages_in_index);
  out->set_leases(info.leases);
  out->set_pinned(info.pinned);
  out->set_created_unix_ms(UnixMillis(info.created));
  out->set_last_access_unix_ms(UnixMillis(info.last_access));
  out->set_hits(info.hits);
  proto::TokensToProto(info.tokens, out->mutable_tokens());
}

void ListToProto(const core::ListReply& reply, v1::ListResponse* out) {
  out->Clear();
  out->mutable_blobs()->Reserve(static_cast<int>(reply.blobs.size()));
  for (const core::BlobInfo& info : reply.blobs) BlobInfoToProto(info, out->add_blobs());
  out->set_next_page_token(reply.next_page_token);
}

void PrefetchToProto(const core::PrefetchReply& reply, v1::PrefetchResponse* out) {
  out->Clear();
  out->set_matched_pages(reply.matched_pages);
  out->set_resident_pages(reply.resident_pages);
  out->set_promotions(reply.promotions);
  out->set_rebuilds_queued(reply.rebuilds_queued);
}

void RebuildRequestToProto(const core::RebuildRequestReply& reply,
                           v1::RequestRebuildResponse* out) {
  out->Clear();
  out->set_queued(reply.queued);
  out->set_already_queued(reply.already_queued);
  out->set_resident(reply.resident);
}

void RebuildTaskToProto(const core::RebuildTask& task, absl::Time now, v1::RebuildTask* out) {
  out->Clear();
  out->set_task_id(task.task_id);
  if (task.ns.has_value()) proto::ToProto(*task.ns, out->mutable_ns());
  proto::ToProto(task.key, out->mutable_key());
  if (task.parent.has_value()) {
    proto::ToProto(task.parent->key, out->mutable_parent()->mutable_key());
    out->mutable_parent()->set_pages(task.parent->pages);
  }
  out->set_first_page(task.first_page);
  out->set_pages(task.pages);
  proto::TokensToProto(task.sequence_tokens, out->mutable_sequence_tokens());
  proto::ChecksumsToProto(task.checksums, out->mutable_chunk_checksums());
  out->set_expires_in_ms(ExpiresInMs(task.deadline, now));
}

namespace {

v1::Phase PhaseToProto(core::LookupPhase phase) {
  switch (phase) {
    case core::LookupPhase::kUnspecified:
      return v1::PHASE_UNSPECIFIED;
    case core::LookupPhase::kPrefill:
      return v1::PHASE_PREFILL;
    case core::LookupPhase::kMidfill:
      return v1::PHASE_MIDFILL;
    case core::LookupPhase::kDecode:
      return v1::PHASE_DECODE;
  }
  return v1::PHASE_UNSPECIFIED;  // unreachable: every enumerator is handled above
}

void TierStatsToProto(v1::Tier tier, const tiering::TierStats& stats, uint64_t pages,
                      v1::TierStats* out) {
  out->set_tier(tier);
  out->set_capacity_bytes(stats.capacity_bytes);
  out->set_used_bytes(stats.used_bytes);
  out->set_free_bytes(stats.free_bytes());
  out->set_blobs(stats.blobs);
  out->set_hits(stats.hits);
  out->set_misses(stats.misses);
  out->set_evictions(stats.evictions);
  out->set_promotions(stats.promotions);
  out->set_demotions(stats.demotions);
  out->set_pages(pages);
}

void LookupsToProto(core::LookupPhase phase, const core::LookupCounts& counts,
                    v1::LookupStats* out) {
  out->set_phase(PhaseToProto(phase));
  out->set_lookups(counts.lookups);
  out->set_queried_pages(counts.queried_pages);
  out->set_dram_hit_pages(counts.dram_hit_pages);
  out->set_ssd_hit_pages(counts.ssd_hit_pages);
  out->set_text_hit_pages(counts.text_hit_pages);
  out->set_miss_pages(counts.miss_pages);
}

// The name PlanTiers gives a tier; TIER_UNSPECIFIED for one the wire has no value for.
v1::Tier TierOfName(std::string_view name) {
  if (name == "hbm") return v1::TIER_HBM;
  if (name == "dram") return v1::TIER_DRAM;
  if (name == "ssd") return v1::TIER_SSD;
  if (name == "text") return v1::TIER_TEXT;
  return v1::TIER_UNSPECIFIED;
}

}  // namespace

void CurvePointsToProto(absl::Span<const tiering::mrc::CurvePoint> points, size_t max_points,
                        google::protobuf::RepeatedPtrField<v1::CurvePoint>* out) {
  out->Clear();
  const size_t n = points.size();
  const size_t kept = std::min(n, max_points);
  out->Reserve(static_cast<int>(kept));
  for (size_t i = 0; i < kept; ++i) {
    // Evenly spaced indices from 0 to n - 1: all of them when n <= max_points.
    const size_t index = kept == n ? i : (kept == 1 ? n - 1 : i * (n - 1) / (kept - 1));
    v1::CurvePoint* point = out->Add();
    point->set_capacity_bytes(points[index].capacity_bytes);
    point->set_hit_ratio(points[index].hit_ratio);
  }
}

std::string CutAdvice(std::string_view advice, size_t max_bytes) {
  if (advice.size() <= max_bytes) return std::string(advice);
  size_t end = max_bytes;
  // Back off continuation bytes (10xxxxxx) so a multi-byte character is not split.
  while (end > 0 && (static_cast<unsigned char>(advice[end]) & 0xC0) == 0x80) --end;
  return std::string(advice.substr(0, end));
}

void TiersToProto(const core::NodeTiers& tiers, v1::TiersResponse* out) {
  out->Clear();
  TierStatsToProto(v1::TIER_DRAM, tiers.dram, tiers.dram_pages, out->add_tiers());
  if (tiers.ssd.has_value()) {
    TierStatsToProto(v1::TIER_SSD, *tiers.ssd, tiers.ssd_pages, out->add_tiers());
  }

  v1::TextTierStats* text = out->mutable_text();
  text->set_capacity_bytes(tiers.text.capacity_bytes);
  text->set_used_bytes(tiers.text.used_bytes);
  text->set_blobs(tiers.text.blobs);
  text->set_drops(tiers.text.drops);
  text->set_deletions(tiers.text.deletions);
  text->set_rebuilds(tiers.text.rebuilds);
  text->set_pages(tiers.text_pages);

  v1::RebuildQueueStats* rebuild = out->mutable_rebuild();
  rebuild->set_queued(tiers.rebuild.queued);
  rebuild->set_in_flight(tiers.rebuild.in_flight);
  rebuild->set_requested(tiers.rebuild.requested);
  rebuild->set_completed(tiers.rebuild.completed);
  rebuild->set_expired(tiers.rebuild.expired);
  rebuild->set_dropped(tiers.rebuild.dropped);

  v1::IndexStats* index = out->mutable_index();
  index->set_roots(tiers.index.roots);
  index->set_nodes(tiers.index.nodes);
  index->set_leaves(tiers.index.leaves);
  index->set_pages(tiers.index.pages);
  index->set_token_bytes(tiers.index.token_bytes);
  index->set_index_bytes(tiers.index.index_bytes);
  index->set_pinned_nodes(tiers.index.pinned_nodes);

  v1::EngineStats* engine = out->mutable_engine();
  engine->set_namespaces(tiers.namespaces);
  engine->set_blobs(tiers.blobs);
  engine->set_unlinked_blobs(tiers.unlinked_blobs);
  engine->set_token_only_blobs(tiers.token_only_blobs);
  engine->set_pending_puts(tiers.pending_puts);
  engine->set_leases(tiers.leases);
  engine->set_matches(tiers.matches);
  engine->set_matched_pages(tiers.matched_pages);
  engine->set_queried_pages(tiers.queried_pages);
  engine->set_draining(tiers.draining);

  for (const core::LookupPhase phase :
       {core::LookupPhase::kPrefill, core::LookupPhase::kMidfill, core::LookupPhase::kDecode}) {
    LookupsToProto(phase, tiers.lookups[core::LookupPhaseIndex(phase)], out->add_lookups());
  }

  v1::MissRatioCurve* mrc = out->mutable_mrc();
  CurvePointsToProto(tiers.mrc.points, proto::kMaxCurvePoints, mrc->mutable_points());
  mrc->set_accesses(tiers.mrc.accesses);
  mrc->set_sampled_accesses(tiers.mrc.sampled_accesses);
  mrc->set_sample_rate(tiers.mrc.sample_rate);
  mrc->set_working_set_bytes(tiers.mrc.working_set_bytes);

  for (const tiering::mrc::TierCurve& curve : tiers.curves) {
    const v1::Tier tier = TierOfName(curve.tier);
    if (tier == v1::TIER_UNSPECIFIED) {
      LOG_FIRST_N(WARNING, 1) << "Tiers: a curve of tier \"" << curve.tier
                              << "\" has no wire value; left out";
      continue;
    }
    v1::TierCurve* c = out->add_curves();
    c->set_tier(tier);
    c->set_capacity_bytes(curve.capacity_bytes);
    c->set_expected_hit_ratio(curve.expected_hit_ratio);
    CurvePointsToProto(curve.points, proto::kMaxCurvePoints, c->mutable_points());
    c->mutable_recommended()->set_capacity_bytes(curve.recommended.capacity_bytes);
    c->mutable_recommended()->set_hit_ratio(curve.recommended.hit_ratio);
    c->set_advice(CutAdvice(curve.advice, proto::kMaxAdviceBytes));
  }
  out->set_token_bytes_per_kv_byte(tiers.token_bytes_per_kv_byte);
}

void EvictToProto(const core::EvictReply& reply, v1::EvictResponse* out) {
  out->Clear();
  out->set_bytes_freed(reply.bytes_freed);
  out->set_pages_evicted(reply.pages_evicted);
  out->set_blobs_unlinked(reply.blobs_unlinked);
  out->set_blobs_demoted(reply.blobs_demoted);
  out->set_blobs_dropped(reply.blobs_dropped);
}

}  // namespace strata::store::rpc
