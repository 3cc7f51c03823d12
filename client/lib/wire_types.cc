#include "client/lib/wire_types.h"

#include <string>

#include "absl/strings/str_cat.h"

#include "strata/proto/key_convert.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/repeated_convert.h"

namespace strata::client_internal {
namespace {

radix::BlobKey KeyOf(const v1::BlobKey& key) {
  return radix::BlobKey{radix::PrefixHash{key.hi(), key.lo()}};
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

absl::StatusOr<MatchResult> MatchResultFromProto(const v1::MatchResponse& response) {
  MatchResult result;
  result.matched_pages = response.matched_pages();
  result.truncated = response.truncated();
  result.segments.reserve(response.segments_size());
  for (int i = 0; i < response.segments_size(); ++i) {
    const v1::Segment& s = response.segments(i);
    auto tier = TierFromProto(s.tier(), absl::StrCat("segments[", i, "].tier"));
    if (!tier.ok()) return tier.status();
    result.segments.push_back(Segment{KeyOf(s.blob()), s.blob_page_offset(), s.page_count(),
                                      s.seq_page_begin(), s.blob_pages(), *tier});
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
    out.tiers.push_back(TierInfo{*tier, t.capacity_bytes(), t.used_bytes(), t.free_bytes(),
                                 t.blobs(), t.hits(), t.misses(), t.evictions(), t.promotions(),
                                 t.demotions()});
  }
  const v1::IndexStats& x = response.index();
  out.index = IndexInfo{x.roots(),       x.nodes(),       x.leaves(),      x.pages(),
                        x.token_bytes(), x.index_bytes(), x.pinned_nodes()};
  const v1::EngineStats& e = response.engine();
  out.engine = EngineInfo{e.namespaces(),    e.blobs(),   e.unlinked_blobs(), e.token_only_blobs(),
                          e.pending_puts(),  e.leases(),  e.matches(),        e.matched_pages(),
                          e.queried_pages(), e.draining()};
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

}  // namespace strata::client_internal
