#include "strata/proto/report_convert.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

#include "strata/base/status_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/proto/repeated_convert.h"

namespace strata::proto {
namespace {

std::string Name(std::string_view field) { return std::string(field); }

report::CurvePoint PointOf(const v1::CurvePoint& p) {
  return report::CurvePoint{p.capacity_bytes(), p.hit_ratio()};
}

std::vector<report::CurvePoint> PointsOf(
    const google::protobuf::RepeatedPtrField<v1::CurvePoint>& points) {
  std::vector<report::CurvePoint> out;
  out.reserve(points.size());
  for (const v1::CurvePoint& p : points) out.push_back(PointOf(p));
  return out;
}

}  // namespace

v1::Tier TierToProto(report::Tier tier) {
  const int value = static_cast<int>(tier);
  return report::IsTierValue(value) ? static_cast<v1::Tier>(value) : v1::TIER_UNSPECIFIED;
}

absl::StatusOr<report::Tier> TierFromProto(int value, std::string_view field) {
  if (value == v1::TIER_UNSPECIFIED) {
    return absl::InvalidArgumentError(absl::StrCat(Name(field), ": missing"));
  }
  if (!report::IsTierValue(value)) {
    return absl::InvalidArgumentError(absl::StrCat(Name(field), ": unknown value ", value));
  }
  return static_cast<report::Tier>(value);
}

absl::StatusOr<v1::Phase> PhaseToProto(report::LookupPhase phase, std::string_view field) {
  switch (phase) {
    case report::LookupPhase::kUnspecified:
      return v1::PHASE_UNSPECIFIED;
    case report::LookupPhase::kPrefill:
      return v1::PHASE_PREFILL;
    case report::LookupPhase::kMidfill:
      return v1::PHASE_MIDFILL;
    case report::LookupPhase::kDecode:
      return v1::PHASE_DECODE;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(Name(field), ": ", static_cast<int>(phase), " is not a LookupPhase"));
}

absl::StatusOr<report::LookupPhase> PhaseFromProto(int value, std::string_view field) {
  switch (value) {
    case v1::PHASE_UNSPECIFIED:
      return report::LookupPhase::kUnspecified;
    case v1::PHASE_PREFILL:
      return report::LookupPhase::kPrefill;
    case v1::PHASE_MIDFILL:
      return report::LookupPhase::kMidfill;
    case v1::PHASE_DECODE:
      return report::LookupPhase::kDecode;
    default:
      return absl::InvalidArgumentError(absl::StrCat(Name(field), ": unknown value ", value));
  }
}

void MatchToProto(const report::MatchResult& match, v1::MatchResponse* out, size_t max_segments,
                  size_t max_text_tokens) {
  out->Clear();
  size_t kept = std::min(match.segments.size(), max_segments);
  size_t text_tokens = 0;
  for (size_t i = 0; i < kept; ++i) {
    const report::Segment& segment = match.segments[i];
    if (segment.tier != report::Tier::kText) continue;
    if (segment.tokens.size() > max_text_tokens - text_tokens) {
      kept = i;
      break;
    }
    text_tokens += segment.tokens.size();
  }
  out->mutable_segments()->Reserve(static_cast<int>(kept));
  uint32_t covered = 0;
  for (size_t i = 0; i < kept; ++i) {
    const report::Segment& segment = match.segments[i];
    v1::Segment* s = out->add_segments();
    ToProto(segment.blob, s->mutable_blob());
    s->set_blob_page_offset(segment.blob_page_offset);
    s->set_page_count(segment.page_count);
    s->set_seq_page_begin(segment.seq_page_begin);
    s->set_blob_pages(segment.blob_pages);
    s->set_tier(TierToProto(segment.tier));
    if (segment.tier == report::Tier::kText) TokensToProto(segment.tokens, s->mutable_tokens());
    s->set_replicas(segment.replicas);
    covered = segment.seq_page_begin + segment.page_count;
  }
  if (kept < match.segments.size()) {
    out->set_matched_pages(covered);
    out->set_truncated(true);
  } else {
    out->set_matched_pages(match.matched_pages);
    out->set_truncated(match.truncated);
  }
}

absl::StatusOr<report::MatchResult> MatchFromProto(const v1::MatchResponse& response) {
  report::MatchResult result;
  result.matched_pages = response.matched_pages();
  result.truncated = response.truncated();
  result.segments.reserve(response.segments_size());
  for (int i = 0; i < response.segments_size(); ++i) {
    const v1::Segment& s = response.segments(i);
    STRATA_ASSIGN_OR_RETURN(const report::Tier tier,
                            TierFromProto(s.tier(), absl::StrCat("segments[", i, "].tier")));
    report::Segment segment{radix::BlobKey{radix::PrefixHash{s.blob().hi(), s.blob().lo()}},
                            s.blob_page_offset(),
                            s.page_count(),
                            s.seq_page_begin(),
                            s.blob_pages(),
                            tier,
                            {},
                            s.replicas()};
    if (!s.tokens().empty()) {
      STRATA_ASSIGN_OR_RETURN(
          TokenView tokens, TokensFromProto(s.tokens(), absl::StrCat("segments[", i, "].tokens")));
      segment.tokens.assign(tokens.span().begin(), tokens.span().end());
    }
    result.segments.push_back(std::move(segment));
  }
  return result;
}

void ToProto(const report::TierStats& stats, v1::TierStats* out) {
  out->set_tier(TierToProto(stats.tier));
  out->set_capacity_bytes(stats.capacity_bytes);
  out->set_used_bytes(stats.used_bytes);
  out->set_free_bytes(stats.free_bytes());
  out->set_blobs(stats.blobs);
  out->set_hits(stats.hits);
  out->set_misses(stats.misses);
  out->set_evictions(stats.evictions);
  out->set_promotions(stats.promotions);
  out->set_demotions(stats.demotions);
  out->set_pages(stats.pages);
}

void ToProto(const report::TextTierStats& stats, v1::TextTierStats* out) {
  out->set_capacity_bytes(stats.capacity_bytes);
  out->set_used_bytes(stats.used_bytes);
  out->set_blobs(stats.blobs);
  out->set_drops(stats.drops);
  out->set_deletions(stats.deletions);
  out->set_rebuilds(stats.rebuilds);
  out->set_pages(stats.pages);
}

void ToProto(const report::RebuildQueueStats& stats, v1::RebuildQueueStats* out) {
  out->set_queued(stats.queued);
  out->set_in_flight(stats.in_flight);
  out->set_requested(stats.requested);
  out->set_completed(stats.completed);
  out->set_expired(stats.expired);
  out->set_dropped(stats.dropped);
}

void ToProto(const report::IndexStats& stats, v1::IndexStats* out) {
  out->set_roots(stats.roots);
  out->set_nodes(stats.nodes);
  out->set_leaves(stats.leaves);
  out->set_pages(stats.pages);
  out->set_token_bytes(stats.token_bytes);
  out->set_index_bytes(stats.index_bytes);
  out->set_pinned_nodes(stats.pinned_nodes);
}

void ToProto(const report::EngineStats& stats, v1::EngineStats* out) {
  out->set_namespaces(stats.namespaces);
  out->set_blobs(stats.blobs);
  out->set_unlinked_blobs(stats.unlinked_blobs);
  out->set_token_only_blobs(stats.token_only_blobs);
  out->set_pending_puts(stats.pending_puts);
  out->set_leases(stats.leases);
  out->set_matches(stats.matches);
  out->set_matched_pages(stats.matched_pages);
  out->set_queried_pages(stats.queried_pages);
  out->set_draining(stats.draining);
  out->set_meta_write_errors(stats.meta_write_errors);
  out->set_segments(stats.segments);
  out->set_replicated_blobs(stats.replicated_blobs);
}

void ToProto(const report::MetaStats& stats, v1::MetaStats* out) {
  out->set_records(stats.records);
  out->set_disk_bytes(stats.disk_bytes);
  out->set_memtable_bytes(stats.memtable_bytes);
  out->set_table_reader_bytes(stats.table_reader_bytes);
  out->set_block_cache_bytes(stats.block_cache_bytes);
}

void ToProto(const report::LookupCounts& counts, v1::LookupStats* out) {
  out->set_phase(PhaseToProto(counts.phase).value_or(v1::PHASE_UNSPECIFIED));
  out->set_lookups(counts.lookups);
  out->set_queried_pages(counts.queried_pages);
  out->set_dram_hit_pages(counts.dram_hit_pages);
  out->set_ssd_hit_pages(counts.ssd_hit_pages);
  out->set_text_hit_pages(counts.text_hit_pages);
  out->set_miss_pages(counts.miss_pages);
}

void ToProto(const report::MissRatioCurve& curve, v1::MissRatioCurve* out) {
  CurvePointsToProto(curve.points, kMaxCurvePoints, out->mutable_points());
  out->set_accesses(curve.accesses);
  out->set_sampled_accesses(curve.sampled_accesses);
  out->set_sample_rate(curve.sample_rate);
  out->set_working_set_bytes(curve.working_set_bytes);
}

void ToProto(const report::TierCurve& curve, v1::TierCurve* out) {
  out->set_tier(TierToProto(curve.tier));
  out->set_capacity_bytes(curve.capacity_bytes);
  out->set_expected_hit_ratio(curve.expected_hit_ratio);
  CurvePointsToProto(curve.points, kMaxCurvePoints, out->mutable_points());
  if (curve.recommended.has_value()) {
    out->mutable_recommended()->set_capacity_bytes(curve.recommended->capacity_bytes);
    out->mutable_recommended()->set_hit_ratio(curve.recommended->hit_ratio);
  }
  out->set_advice(CutAdvice(curve.advice, kMaxAdviceBytes));
}

void ToProto(const report::NodeTiers& tiers, v1::TiersResponse* out) {
  out->Clear();
  for (const report::TierStats& stats : tiers.tiers) ToProto(stats, out->add_tiers());
  ToProto(tiers.text, out->mutable_text());
  ToProto(tiers.rebuild, out->mutable_rebuild());
  ToProto(tiers.index, out->mutable_index());
  ToProto(tiers.engine, out->mutable_engine());
  ToProto(tiers.meta, out->mutable_meta());
  for (const report::LookupCounts& counts : tiers.lookups) ToProto(counts, out->add_lookups());
  ToProto(tiers.mrc, out->mutable_mrc());
  for (const report::TierCurve& curve : tiers.curves) ToProto(curve, out->add_curves());
  out->set_token_bytes_per_kv_byte(tiers.token_bytes_per_kv_byte);
  for (const report::TenantUsage& u : tiers.tenants) {
    v1::TenantUsage* t = out->add_tenants();
    t->set_tenant(u.tenant);
    t->set_blobs(u.blobs);
    t->set_dram_bytes(u.dram_bytes);
    t->set_ssd_bytes(u.ssd_bytes);
    t->set_text_blobs(u.text_blobs);
    t->set_dram_charged_bytes(u.dram_charged_bytes);
    t->set_ssd_charged_bytes(u.ssd_charged_bytes);
    t->set_dram_quota_bytes(u.dram_quota_bytes);
    t->set_ssd_quota_bytes(u.ssd_quota_bytes);
    t->set_quota_evictions(u.quota_evictions);
    t->set_quota_refusals(u.quota_refusals);
  }
}

absl::StatusOr<report::TierStats> TierStatsFromProto(const v1::TierStats& t,
                                                     std::string_view field) {
  STRATA_ASSIGN_OR_RETURN(const report::Tier tier,
                          TierFromProto(t.tier(), absl::StrCat(Name(field), ".tier")));
  return report::TierStats{.tier = tier,
                           .capacity_bytes = t.capacity_bytes(),
                           .used_bytes = t.used_bytes(),
                           .blobs = t.blobs(),
                           .hits = t.hits(),
                           .misses = t.misses(),
                           .evictions = t.evictions(),
                           .promotions = t.promotions(),
                           .demotions = t.demotions(),
                           .pages = t.pages()};
}

report::TextTierStats FromProto(const v1::TextTierStats& t) {
  return report::TextTierStats{.capacity_bytes = t.capacity_bytes(),
                               .used_bytes = t.used_bytes(),
                               .blobs = t.blobs(),
                               .drops = t.drops(),
                               .deletions = t.deletions(),
                               .rebuilds = t.rebuilds(),
                               .pages = t.pages()};
}

report::RebuildQueueStats FromProto(const v1::RebuildQueueStats& r) {
  return report::RebuildQueueStats{r.queued(),    r.in_flight(), r.requested(),
                                   r.completed(), r.expired(),   r.dropped()};
}

report::IndexStats FromProto(const v1::IndexStats& x) {
  return report::IndexStats{x.roots(),       x.nodes(),       x.leaves(),      x.pages(),
                            x.token_bytes(), x.index_bytes(), x.pinned_nodes()};
}

report::EngineStats FromProto(const v1::EngineStats& e) {
  return report::EngineStats{.namespaces = e.namespaces(),
                             .blobs = e.blobs(),
                             .unlinked_blobs = e.unlinked_blobs(),
                             .token_only_blobs = e.token_only_blobs(),
                             .segments = e.segments(),
                             .replicated_blobs = e.replicated_blobs(),
                             .pending_puts = e.pending_puts(),
                             .leases = e.leases(),
                             .matches = e.matches(),
                             .matched_pages = e.matched_pages(),
                             .queried_pages = e.queried_pages(),
                             .meta_write_errors = e.meta_write_errors(),
                             .draining = e.draining()};
}

report::MetaStats FromProto(const v1::MetaStats& m) {
  return report::MetaStats{.records = m.records(),
                           .disk_bytes = m.disk_bytes(),
                           .memtable_bytes = m.memtable_bytes(),
                           .table_reader_bytes = m.table_reader_bytes(),
                           .block_cache_bytes = m.block_cache_bytes()};
}

report::MissRatioCurve FromProto(const v1::MissRatioCurve& m) {
  return report::MissRatioCurve{.points = PointsOf(m.points()),
                                .accesses = m.accesses(),
                                .sampled_accesses = m.sampled_accesses(),
                                .sample_rate = m.sample_rate(),
                                .working_set_bytes = m.working_set_bytes()};
}

absl::StatusOr<report::NodeTiers> TiersFromProto(const v1::TiersResponse& response) {
  report::NodeTiers out;
  for (int i = 0; i < response.tiers_size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(report::TierStats stats,
                            TierStatsFromProto(response.tiers(i), absl::StrCat("tiers[", i, "]")));
    out.tiers.push_back(stats);
  }
  out.text = FromProto(response.text());
  out.rebuild = FromProto(response.rebuild());
  out.index = FromProto(response.index());
  out.engine = FromProto(response.engine());
  out.meta = FromProto(response.meta());
  for (const v1::LookupStats& l : response.lookups()) {
    const absl::StatusOr<report::LookupPhase> phase = PhaseFromProto(l.phase(), "lookups.phase");
    // A phase newer than this reader (or none): that entry is left out.
    if (!phase.ok() || *phase == report::LookupPhase::kUnspecified) continue;
    out.lookups.push_back(report::LookupCounts{.phase = *phase,
                                               .lookups = l.lookups(),
                                               .queried_pages = l.queried_pages(),
                                               .dram_hit_pages = l.dram_hit_pages(),
                                               .ssd_hit_pages = l.ssd_hit_pages(),
                                               .text_hit_pages = l.text_hit_pages(),
                                               .miss_pages = l.miss_pages()});
  }
  out.mrc = FromProto(response.mrc());
  for (const v1::TierCurve& c : response.curves()) {
    const absl::StatusOr<report::Tier> tier = TierFromProto(c.tier(), "curves.tier");
    if (!tier.ok()) continue;  // a tier newer than this reader: that curve is left out
    report::TierCurve curve{.tier = *tier,
                            .capacity_bytes = c.capacity_bytes(),
                            .expected_hit_ratio = c.expected_hit_ratio(),
                            .points = PointsOf(c.points()),
                            .recommended = std::nullopt,
                            .advice = c.advice()};
    if (c.has_recommended()) curve.recommended = PointOf(c.recommended());
    out.curves.push_back(std::move(curve));
  }
  out.token_bytes_per_kv_byte = response.token_bytes_per_kv_byte();
  for (const v1::TenantUsage& t : response.tenants()) {
    out.tenants.push_back(report::TenantUsage{.tenant = t.tenant(),
                                              .blobs = t.blobs(),
                                              .dram_bytes = t.dram_bytes(),
                                              .ssd_bytes = t.ssd_bytes(),
                                              .text_blobs = t.text_blobs(),
                                              .dram_charged_bytes = t.dram_charged_bytes(),
                                              .ssd_charged_bytes = t.ssd_charged_bytes(),
                                              .dram_quota_bytes = t.dram_quota_bytes(),
                                              .ssd_quota_bytes = t.ssd_quota_bytes(),
                                              .quota_evictions = t.quota_evictions(),
                                              .quota_refusals = t.quota_refusals()});
  }
  return out;
}

void CurvePointsToProto(absl::Span<const report::CurvePoint> points, size_t max_points,
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

}  // namespace strata::proto
