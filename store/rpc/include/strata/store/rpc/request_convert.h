// strata.v1 requests -> the node engine's request values, with the checks the engine
// does not make itself: required fields, the count limits of strata/proto/limits.h, and
// the shape of each Read range. Everything the engine does check (page alignment, byte
// and checksum counts against the layout, parent ranges, key mismatch, blob size) is left
// to it, so each failure has one source.
//
// Errors: INVALID_ARGUMENT naming the wire field as a path (docs/api.md, "Conventions"):
//
//   function              failure (message starts with)
//   --------------------  ----------------------------------------------------------------
//   IdFromProto           id 0: "<field>: missing"
//   SegmentStartFromProto no hash: "<field>.hash: missing"; pages 0: "<field>.pages: must
//                         be >= 1"
//   PutRequestFromProto   ns malformed: "ns..." (proto::NamespaceFromProto);
//                         parent without key: "parent.key: missing";
//                         segment_start as SegmentStartFromProto ("segment_start...");
//                         tokens length not a multiple of 4: "tokens: N bytes is not a
//                         whole number of 4-byte token ids";
//                         tokens over kMaxTokensPerRequest: "tokens: N entries exceed ...";
//                         checksums over kMaxChunksPerBlob: "chunk_checksums: N entries ..."
//   ReadRequestFromProto  ns malformed; no ranges: "ranges: missing";
//                         over kMaxReadRanges: "ranges: N entries exceed the limit of M";
//                         "ranges[i].blob: missing"; "ranges[i].num_pages: must be >= 1";
//                         "ranges[i].layer_end: E must be > layer_begin B";
//                         over kMaxChunksPerRead: "ranges: cover more than M chunks"
//   ListRequestFromProto  ns filter malformed: "ns..."
//   PrefetchRequestFromProto
//                         ns malformed: "ns..."; tokens as PutRequestFromProto
//   RequestRebuildFromProto
//                         zero or missing key: "key: missing"
//   PullRebuildTasksFromProto
//                         max_tasks 0: "max_tasks: must be >= 1"; over
//                         kMaxRebuildTasksPerPull: "max_tasks: N exceeds the limit of M";
//                         wait_ms over kMaxRebuildWaitMs: "wait_ms: N exceeds the limit of M"
//   (key fields)          use proto::BlobKeyFromProto: zero key -> "<field>: missing"
//
// Checks run in the order listed; the first failure is returned.
// Spans in the results view the request message (valid while it lives, unmodified), except
// BeginPutArgs.put.tokens, which may view BeginPutArgs.tokens' own copy (valid while that
// BeginPutArgs, or one it was moved into, lives).
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "strata/proto/protocol_internal.h"
#include "strata/proto/repeated_convert.h"
#include "strata/radix/namespace.h"
#include "strata/store/core/node_engine_types.h"

namespace strata::store::rpc {

// A put_id or lease_id: non-zero.
absl::StatusOr<uint64_t> IdFromProto(uint64_t id, std::string_view field);

// MatchRequest.segment_start, BeginPutRequest.segment_start.
absl::StatusOr<core::SegmentStart> SegmentStartFromProto(const v1::SegmentStart& start,
                                                         std::string_view field);

// MatchRequest.phase: PHASE_UNSPECIFIED -> kUnspecified, PREFILL, MIDFILL, DECODE alike.

// A TTL in milliseconds; 0 stays 0 (the engine's default).
absl::Duration TtlFromProto(uint32_t ms);

struct BeginPutArgs {
  radix::Namespace ns;
  core::PutRequest put;     // checksums view the request; tokens view `tokens`
  proto::TokenView tokens;  // what put.tokens views (the request, or a copy owned here)
};
// An all-zero `key` counts as absent (the reserved "unset" key).
absl::StatusOr<BeginPutArgs> PutRequestFromProto(const v1::BeginPutRequest& request);

struct ReadArgs {
  radix::Namespace ns;
  std::vector<core::ReadRange> ranges;
  absl::Duration ttl;
};
absl::StatusOr<ReadArgs> ReadRequestFromProto(const v1::ReadRequest& request);

// The namespace filter (ns -> its h_0, or namespace_hash as sent), page token and limit
// (the engine applies the default and clamps).
absl::StatusOr<core::ListRequest> ListRequestFromProto(const v1::ListRequest& request);

struct PrefetchArgs {
  radix::Namespace ns;
  proto::TokenView tokens;  // views the request (or its own copy)
};
absl::StatusOr<PrefetchArgs> PrefetchRequestFromProto(const v1::PrefetchRequest& request);

struct RebuildRequestArgs {
  radix::BlobKey key;
  bool with_prefix = false;
};
absl::StatusOr<RebuildRequestArgs> RequestRebuildFromProto(
    const v1::RequestRebuildRequest& request);

struct PullRebuildTasksArgs {
  uint32_t max_tasks = 0;  // 1..kMaxRebuildTasksPerPull
  absl::Duration wait;     // 0..kMaxRebuildWaitMs
};
absl::StatusOr<PullRebuildTasksArgs> PullRebuildTasksFromProto(
    const v1::PullRebuildTasksRequest& request);

}  // namespace strata::store::rpc
