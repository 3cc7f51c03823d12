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
#include "strata/proto/report_convert.h"

namespace strata::client_internal {
namespace {

// A converter's INVALID_ARGUMENT about a node's answer is the node's bug: INTERNAL.
absl::Status NodeBug(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kInvalidArgument) return status;
  return absl::InternalError(status.message());
}

}  // namespace

void SegmentStartToProto(const SegmentStart& start, v1::SegmentStart* out) {
  proto::ToProto(start.hash, out->mutable_hash());
  out->set_pages(start.pages);
}

absl::StatusOr<MatchResult> MatchResultFromProto(const v1::MatchResponse& response) {
  absl::StatusOr<MatchResult> match = proto::MatchFromProto(response);
  if (!match.ok()) return NodeBug(match.status());
  return match;
}

absl::StatusOr<BlobInfo> BlobInfoFromProto(const v1::BlobInfo& info, std::string_view field) {
  const std::string name(field);
  BlobInfo out;
  out.key = proto::BlobKeyOf(info.key());
  auto ns = proto::NamespaceFromProto(info.ns(), absl::StrCat(name, ".ns"));
  if (!ns.ok()) return absl::InternalError(ns.status().message());
  out.tenant = ns->tenant();
  out.model = ns->model();
  out.layout = ns->layout();
  out.namespace_hash = proto::PrefixHashFromProto(info.namespace_hash());
  if (info.has_parent())
    out.parent = Parent{proto::BlobKeyOf(info.parent().key()), info.parent().pages()};
  out.start_hash = proto::PrefixHashFromProto(info.start_hash());
  out.first_page = info.first_page();
  out.pages = info.pages();
  out.bytes = info.bytes();
  out.checksum = info.checksum();
  for (int i = 0; i < info.tiers_size(); ++i) {
    auto tier = proto::TierFromProto(info.tiers(i), absl::StrCat(name, ".tiers[", i, "]"));
    if (!tier.ok()) return NodeBug(tier.status());
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

absl::StatusOr<NodeTiers> NodeTiersFromProto(const v1::TiersResponse& response) {
  absl::StatusOr<NodeTiers> tiers = proto::TiersFromProto(response);
  if (!tiers.ok()) return NodeBug(tiers.status());
  return tiers;
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
  if (task.has_parent())
    out.parent = Parent{proto::BlobKeyOf(task.parent().key()), task.parent().pages()};
  out.first_page = task.first_page();
  out.pages = task.pages();
  uint32_t from = 0;
  if (task.has_segment_start()) {
    from = task.segment_start().pages();
    if (from == 0 || from > out.first_page || !task.segment_start().has_hash()) {
      return absl::InternalError(absl::StrCat(name, ".segment_start: page ", from,
                                              task.segment_start().has_hash() ? "" : ", no hash",
                                              " for a blob from page ", out.first_page));
    }
    out.segment_start = SegmentStart{proto::PrefixHashFromProto(task.segment_start().hash()), from};
  }
  auto tokens =
      proto::TokensFromProto(task.sequence_tokens(), absl::StrCat(name, ".sequence_tokens"));
  if (!tokens.ok()) return absl::InternalError(tokens.status().message());
  out.sequence_tokens.assign(tokens->span().begin(), tokens->span().end());
  const KvLayout& layout = out.ns->layout();
  const uint64_t needed = (uint64_t{out.first_page} + out.pages - from) * layout.page_tokens;
  if (out.pages == 0 || out.sequence_tokens.size() != needed) {
    return absl::InternalError(absl::StrCat(
        name, ": ", out.sequence_tokens.size(), " sequence tokens for pages [", from, ", ",
        uint64_t{out.first_page} + out.pages, ") of ", layout.page_tokens, " tokens"));
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
