#include "strata/store/rpc/reply_convert.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/repeated_convert.h"
#include "strata/proto/report_convert.h"

namespace strata::store::rpc {
namespace {

void SetDataPlane(std::string_view address, v1::DataPlaneEndpoint* out) {
  out->set_ucx_address(std::string(address));
}

}  // namespace

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
  for (const report::Tier tier : info.tiers) out->add_tiers(proto::TierToProto(tier));
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
  if (task.segment_start.has_value()) {
    proto::ToProto(task.segment_start->hash, out->mutable_segment_start()->mutable_hash());
    out->mutable_segment_start()->set_pages(task.segment_start->pages);
  }
  out->set_first_page(task.first_page);
  out->set_pages(task.pages);
  proto::TokensToProto(task.sequence_tokens, out->mutable_sequence_tokens());
  proto::ChecksumsToProto(task.checksums, out->mutable_chunk_checksums());
  out->set_expires_in_ms(ExpiresInMs(task.deadline, now));
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
