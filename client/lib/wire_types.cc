#include "client/lib/wire_types.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

#include "strata/proto/key_convert.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/repeated_convert.h"

namespace strata::client_internal {
namespace {

radix::BlobKey KeyOf(const v1::BlobKey& key) {
  return radix::BlobKey{radix::PrefixHash{key.hi(), key.lo()}};
}

std::vector<CurvePoint> PointsOf(const google::protobuf::RepeatedPtrField<v1::CurvePoint>& points) {
  std::vector<CurvePoint> out;
  out.reserve(points.size());
  for (const v1::CurvePoint& p : points)
    out.push_back(CurvePoint{p.capacity_bytes(), p.hit_ratio()});
  return out;
}

}  // namespace

v1::Tier ToProto(Tier tier) { return static_cast<v1::Tier>(static_cast<int>(tier)); }

absl::StatusOr<Tier> TierFromProto(int value, std::string_view field) {
  if (value < static_cast<int>(Tier::kHbm) || value > static_cast<int>(Tier::kText)) {
    return absl::InternalError(
        absl::StrCat(std::string(field), ": the node sent tier ", value, ", not a known tier"));
  }
  return static_cast<Tier>(value);
}

absl::StatusOr<v1::Phase> ToProto(LookupPhase phase) {
  switch (phase) {
    case LookupPhase::kUnspecified:
      return v1::PHASE_UNSPECIFIED;
    case LookupPhase::kPrefill:
      return v1::PHASE_PREFILL;
    case LookupPhase::kMidfill:
      return v1::PHASE_MIDFILL;
    case LookupPhase::kDecode:
      return v1::PHASE_DECODE;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("phase: ", static_cast<int>(phase), " is not a LookupPhase"));
}

std::optional<LookupPhase> LookupPhaseFromProto(int value) {
  switch (value) {
    case v1::PHASE_PREFILL:
      return LookupPhase::kPrefill;
    case v1::PHASE_MIDFILL:
      return LookupPhase::kMidfill;
    case v1::PHASE_DECODE:
      return LookupPhase::kDecode;
    default:
      return std::nullopt;
  }
}

absl::StatusOr<MatchResult> MatchResultFromProto(const v1::MatchResponse& response) {
  MatchResult result;
  result.matched_pages = response.matched_pages();
  result.truncated = response.truncated();
  result.segments.reserve(response.segments_size());
  for (int i = 0; i < response.segments_size(); ++i) {
    const v1::Segment& s = response.segments(i);
    auto tier = TierFromProto(s.tier(), absl::StrCat("segments[", i, "].tier"));
    if (!tier.ok()) return tier.status();
    Segment segment{KeyOf(s.blob()),
                    s.blob_page_offset(),
                    s.page_count(),
                    s.seq_page_begin(),
                    s.blob_pages(),
                    *tier,
                    {}};
    if (!s.tokens().empty()) {
      auto tokens = proto::TokensFromProto(s.tokens(), absl::StrCat("segments[", i, "].tokens"));
      if (!tokens.ok()) return absl::InternalError(tokens.status().message());
      segment.tokens.assign(tokens->span().begin(), tokens->span().end());
    }
    result.segments.push_back(std::move(segment));
  }
  return result;
}

absl::StatusOr<BlobInfo> BlobInfoFromProto(const v1::BlobInfo& info, std::string_view field) {
  const std::string name(field);
  BlobInfo out;
  out.key = KeyOf(info.key());
  auto ns = proto::NamespaceFromProto(info.ns(), absl::StrCat(name, ".ns"));
  if (!ns.ok()) return absl::InternalError(ns.status().message());
  out.tenant = ns->tenant();
  out.model = ns->model();
  out.layout = ns->layout();
  out.namespace_hash = proto::PrefixHashFromProto(info.namespace_hash());
  if (info.has_parent()) out.parent = Parent{KeyOf(info.parent().key()), info.parent().pages()};
  out.start_hash = proto::PrefixHashFromProto(info.start_hash());
  out.first_page = info.first_page();
  out.pages = info.pages();
  out.bytes = info.bytes();
  out.checksum = info.checksum();
  for (int i = 0; i < info.tiers_size(); ++i) {
    auto tier = TierFromProto(info.tiers(i), absl::StrCat(name, ".tiers[", i, "]"));
    if (!tier.ok()) return tier.status();
    out.tiers.push_back(*tier);
  }
  out.pages_indexed = info.pages_indexed();
  out.leases = info.leases();
  out.pinned = info.pinned();
  out.created = absl::FromUnixMillis(static_cast<int64_t>(info.created_unix_ms()));
  out.last_access = absl::FromUnixMillis(static_cast<int64_t>(info.last_access_unix_ms()));
  out.hits = info.hits();
  // A node never sends a ragged or oversized token field: if one arrives, that is our bug.
  auto tokens = proto::TokensFromProto(info.tokens(), absl::StrCat(name, ".tokens"));
  if (!tokens.ok()) return absl::InternalError(tokens.status().message());
  out.tokens.assign(tokens->span().begin(), tokens->span().end());
  return out;
}

absl::StatusOr<TiersInfo> TiersInfoFromProto(const v1::TiersResponse& response) {
  TiersInfo out;
  for (int i = 0; i < response.tiers_size(); ++i) {
    const v1::TierStats& t = response.tiers(i);
    auto tier = TierFromProto(t.tier(), absl::StrCat("tiers[", i, "].tier"));
    if (!tier.ok()) return tier.status();
    out.tiers.push_back(TierInfo{.tier = *tier,
                                 .capacity_bytes = t.capacity_bytes(),
                                 .used_bytes = t.used_bytes(),
                                 .free_bytes = t.free_bytes(),
                                 .blobs = t.blobs(),
                                 .hits = t.hits(),
                                 .misses = t.misses(),
                                 .evictions = t.evictions(),
                                 .promotions = t.promotions(),
                                 .demotions = t.demotions(),
                                 .pages = t.pages()});
  }
  const v1::TextTierStats& text = response.text();
  out.text = TextTierInfo{.capacity_bytes = text.capacity_bytes(),
                          .used_bytes = text.used_bytes(),
                          .blobs = text.blobs(),
                          .drops = text.drops(),
                          .deletions = text.deletions(),
                          .rebuilds = text.rebuilds(),
                          .pages = text.pages()};
  const v1::RebuildQueueStats& rebuild = response.rebuild();
  out.rebuild = RebuildQueueInfo{rebuild.queued(),    rebuild.in_flight(), rebuild.requested(),
                                 rebuild.completed(), rebuild.expired(),   rebuild.dropped()};
  const v1::IndexStats& x = response.index();
  out.index = IndexInfo{x.roots(),       x.nodes(),       x.leaves(),      x.pages(),
                        x.token_bytes(), x.index_bytes(), x.pinned_nodes()};
  const v1::EngineStats& e = response.engine();
  out.engine = EngineInfo{e.namespaces(),    e.blobs(),   e.unlinked_blobs(), e.token_only_blobs(),
                          e.pending_puts(),  e.leases(),  e.matches(),        e.matched_pages(),
                          e.queried_pages(), e.draining()};
  for (const v1::LookupStats& l : response.lookups()) {
    const std::optional<LookupPhase> phase = LookupPhaseFromProto(l.phase());
    if (!phase.has_value()) continue;  // a phase newer than this client: ignored
    out.lookups.push_back(LookupInfo{.phase = *phase,
                                     .lookups = l.lookups(),
                                     .queried_pages = l.queried_pages(),
                                     .dram_hit_pages = l.dram_hit_pages(),
                                     .ssd_hit_pages = l.ssd_hit_pages(),
                                     .text_hit_pages = l.text_hit_pages(),
                                     .miss_pages = l.miss_pages()});
  }
  const v1::MissRatioCurve& mrc = response.mrc();
  out.mrc.points = PointsOf(mrc.points());
  out.mrc.accesses = mrc.accesses();
  out.mrc.sampled_accesses = mrc.sampled_accesses();
  out.mrc.sample_rate = mrc.sample_rate();
  out.mrc.working_set_bytes = mrc.working_set_bytes();
  for (const v1::TierCurve& c : response.curves()) {
    if (!TierFromProto(c.tier(), "curves.tier").ok()) continue;  // newer than this client
    TierCurveInfo curve{.tier = static_cast<Tier>(c.tier()),
                        .capacity_bytes = c.capacity_bytes(),
                        .expected_hit_ratio = c.expected_hit_ratio(),
                        .points = PointsOf(c.points()),
                        .recommended = std::nullopt,
                        .advice = c.advice()};
    if (c.has_recommended()) {
      curve.recommended = CurvePoint{c.recommended().capacity_bytes(), c.recommended().hit_ratio()};
    }
    out.curves.push_back(std::move(curve));
  }
  out.token_bytes_per_kv_byte = response.token_bytes_per_kv_byte();
  return out;
}

HealthInfo HealthInfoFromProto(const v1::HealthResponse& response) {
  HealthInfo out;
  out.draining = response.state() == v1::SERVING_STATE_DRAINING;
  out.version = response.version();
  out.data_plane = response.data_plane().ucx_address();
  out.uptime = absl::Milliseconds(static_cast<int64_t>(response.uptime_ms()));
  return out;
}

PrefetchResult PrefetchResultFromProto(const v1::PrefetchResponse& response) {
  return PrefetchResult{response.matched_pages(), response.resident_pages(), response.promotions(),
                        response.rebuilds_queued()};
}

RebuildRequestResult RebuildRequestResultFromProto(const v1::RequestRebuildResponse& response) {
  return RebuildRequestResult{response.queued(), response.already_queued(), response.resident()};
}

absl::StatusOr<RebuildTask> RebuildTaskFromProto(const v1::RebuildTask& task, absl::Time now,
                                                 std::string_view field) {
  const std::string name(field);
  RebuildTask out;
  out.task_id = task.task_id();
  auto ns = proto::NamespaceFromProto(task.ns(), absl::StrCat(name, ".ns"));
  if (!ns.ok()) return absl::InternalError(ns.status().message());
  out.ns = *std::move(ns);
  auto key = proto::BlobKeyFromProto(task.key(), absl::StrCat(name, ".key"));
  if (!key.ok()) return absl::InternalError(key.status().message());
  out.key = *key;
  if (task.has_parent()) out.parent = Parent{KeyOf(task.parent().key()), task.parent().pages()};
  out.first_page = task.first_page();
  out.pages = task.pages();
  auto tokens =
      proto::TokensFromProto(task.sequence_tokens(), absl::StrCat(name, ".sequence_tokens"));
  if (!tokens.ok()) return absl::InternalError(tokens.status().message());
  out.sequence_tokens.assign(tokens->span().begin(), tokens->span().end());
  const KvLayout& layout = out.ns->layout();
  const uint64_t needed = (uint64_t{out.first_page} + out.pages) * layout.page_tokens;
  if (out.pages == 0 || out.sequence_tokens.size() != needed) {
    return absl::InternalError(absl::StrCat(
        name, ": ", out.sequence_tokens.size(), " sequence tokens for pages [", out.first_page,
        ", ", uint64_t{out.first_page} + out.pages, ") of ", layout.page_tokens, " tokens"));
  }
  if (static_cast<uint64_t>(task.chunk_checksums_size()) !=
      uint64_t{layout.num_layers} * out.pages) {
    return absl::InternalError(absl::StrCat(name, ".chunk_checksums: ", task.chunk_checksums_size(),
                                            ", expected ",
                                            uint64_t{layout.num_layers} * out.pages));
  }
  out.chunk_checksums.assign(task.chunk_checksums().begin(), task.chunk_checksums().end());
  out.deadline = now + absl::Milliseconds(static_cast<int64_t>(
                           std::min<uint64_t>(task.expires_in_ms(), uint64_t{INT64_MAX})));
  return out;
}

}  // namespace strata::client_internal
