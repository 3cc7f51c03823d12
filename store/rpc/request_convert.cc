#include "strata/store/rpc/request_convert.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#include "strata/base/absl_view.h"
#include "strata/base/status_macros.h"
#include "strata/proto/key_convert.h"
#include "strata/proto/limits.h"
#include "strata/proto/namespace_convert.h"
#include "strata/proto/repeated_convert.h"
#include "strata/radix/prefix_hash.h"

namespace strata::store::rpc {
namespace {

absl::Status RangeError(int index, std::string_view field, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("ranges[", index, "].", base::AbslView(field), ": ", base::AbslView(what)));
}

}  // namespace

absl::StatusOr<uint64_t> IdFromProto(uint64_t id, std::string_view field) {
  if (id == 0) return absl::InvalidArgumentError(absl::StrCat(base::AbslView(field), ": missing"));
  return id;
}

absl::Duration TtlFromProto(uint32_t ms) { return absl::Milliseconds(ms); }

absl::StatusOr<core::SegmentStart> SegmentStartFromProto(const v1::SegmentStart& start,
                                                         std::string_view field) {
  if (!start.has_hash()) {
    return absl::InvalidArgumentError(absl::StrCat(base::AbslView(field), ".hash: missing"));
  }
  if (start.pages() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(base::AbslView(field),
                     ".pages: must be >= 1 (a sequence's page 0 starts no "
                     "segment)"));
  }
  return core::SegmentStart{.hash = proto::PrefixHashFromProto(start.hash()),
                            .pages = start.pages()};
}

absl::StatusOr<BeginPutArgs> PutRequestFromProto(const v1::BeginPutRequest& request) {
  STRATA_ASSIGN_OR_RETURN(radix::Namespace ns, proto::NamespaceFromProto(request.ns(), "ns"));
  core::PutRequest put;
  if (request.has_parent()) {
    STRATA_ASSIGN_OR_RETURN(const radix::BlobKey parent_key,
                            proto::BlobKeyFromProto(request.parent().key(), "parent.key"));
    put.parent = core::BlobParent{.key = parent_key, .pages = request.parent().pages()};
  }
  if (request.has_segment_start()) {
    STRATA_ASSIGN_OR_RETURN(put.segment_start,
                            SegmentStartFromProto(request.segment_start(), "segment_start"));
  }
  STRATA_ASSIGN_OR_RETURN(proto::TokenView tokens,
                          proto::TokensFromProto(request.tokens(), "tokens"));
  put.tokens = tokens.span();
  STRATA_ASSIGN_OR_RETURN(put.checksums,
                          proto::ChecksumsFromProto(request.chunk_checksums(), "chunk_checksums",
                                                    proto::kMaxChunksPerBlob));
  put.bytes = request.bytes();
  if (request.has_key() && (request.key().hi() != 0 || request.key().lo() != 0)) {
    STRATA_ASSIGN_OR_RETURN(put.key, proto::BlobKeyFromProto(request.key(), "key"));
  }
  return BeginPutArgs{.ns = std::move(ns), .put = put, .tokens = std::move(tokens)};
}

absl::StatusOr<ReadArgs> ReadRequestFromProto(const v1::ReadRequest& request) {
  STRATA_ASSIGN_OR_RETURN(radix::Namespace ns, proto::NamespaceFromProto(request.ns(), "ns"));
  if (request.ranges().empty()) return absl::InvalidArgumentError("ranges: missing");
  STRATA_RETURN_IF_ERROR(proto::CheckCount("ranges", static_cast<size_t>(request.ranges_size()),
                                           proto::kMaxReadRanges));
  ReadArgs args{.ns = std::move(ns), .ranges = {}, .ttl = TtlFromProto(request.lease_ttl_ms())};
  args.ranges.reserve(request.ranges_size());
  uint64_t chunks = 0;
  for (int i = 0; i < request.ranges_size(); ++i) {
    const v1::ReadRange& range = request.ranges(i);
    STRATA_ASSIGN_OR_RETURN(
        const radix::BlobKey blob,
        proto::BlobKeyFromProto(range.blob(), absl::StrCat("ranges[", i, "].blob")));
    if (range.num_pages() == 0) return RangeError(i, "num_pages", "must be >= 1");
    if (range.layer_end() <= range.layer_begin()) {
      return RangeError(
          i, "layer_end",
          absl::StrCat(range.layer_end(), " must be > layer_begin ", range.layer_begin()));
    }
    // Each product fits in 64 bits (both factors < 2^32); compare before adding.
    const uint64_t range_chunks =
        uint64_t{range.layer_end() - range.layer_begin()} * range.num_pages();
    if (range_chunks > proto::kMaxChunksPerRead - chunks) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ranges: cover more than ", proto::kMaxChunksPerRead,
          " chunks (layers x pages) at ranges[", i, "]; split the read into several Reads"));
    }
    chunks += range_chunks;
    args.ranges.push_back(core::ReadRange{.blob = blob,
                                          .first_page = range.first_page(),
                                          .num_pages = range.num_pages(),
                                          .layer_begin = range.layer_begin(),
                                          .layer_end = range.layer_end()});
  }
  return args;
}

absl::StatusOr<core::ListRequest> ListRequestFromProto(const v1::ListRequest& request) {
  core::ListRequest list;
  switch (request.filter_case()) {
    case v1::ListRequest::kNs: {
      STRATA_ASSIGN_OR_RETURN(const radix::Namespace ns,
                              proto::NamespaceFromProto(request.ns(), "ns"));
      list.namespace_hash = radix::NamespaceHash(ns);
      break;
    }
    case v1::ListRequest::kNamespaceHash:
      list.namespace_hash = proto::PrefixHashFromProto(request.namespace_hash());
      break;
    case v1::ListRequest::FILTER_NOT_SET:
      break;
  }
  list.page_token = request.page_token();
  list.limit = request.limit();
  return list;
}

absl::StatusOr<PrefetchArgs> PrefetchRequestFromProto(const v1::PrefetchRequest& request) {
  STRATA_ASSIGN_OR_RETURN(radix::Namespace ns, proto::NamespaceFromProto(request.ns(), "ns"));
  STRATA_ASSIGN_OR_RETURN(proto::TokenView tokens,
                          proto::TokensFromProto(request.tokens(), "tokens"));
  return PrefetchArgs{.ns = std::move(ns), .tokens = std::move(tokens)};
}

absl::StatusOr<RebuildRequestArgs> RequestRebuildFromProto(
    const v1::RequestRebuildRequest& request) {
  STRATA_ASSIGN_OR_RETURN(const radix::BlobKey key, proto::BlobKeyFromProto(request.key(), "key"));
  return RebuildRequestArgs{.key = key, .with_prefix = request.with_prefix()};
}

absl::StatusOr<PullRebuildTasksArgs> PullRebuildTasksFromProto(
    const v1::PullRebuildTasksRequest& request) {
  if (request.max_tasks() == 0) return absl::InvalidArgumentError("max_tasks: must be >= 1");
  if (request.max_tasks() > proto::kMaxRebuildTasksPerPull) {
    return absl::InvalidArgumentError(absl::StrCat("max_tasks: ", request.max_tasks(),
                                                   " exceeds the limit of ",
                                                   proto::kMaxRebuildTasksPerPull));
  }
  if (request.wait_ms() > proto::kMaxRebuildWaitMs) {
    return absl::InvalidArgumentError(absl::StrCat(
        "wait_ms: ", request.wait_ms(), " exceeds the limit of ", proto::kMaxRebuildWaitMs));
  }
  return PullRebuildTasksArgs{.max_tasks = request.max_tasks(),
                              .wait = absl::Milliseconds(request.wait_ms())};
}

}  // namespace strata::store::rpc
