// The node engine's own reply values (store/core/node_engine_types.h) -> their strata.v1
// messages. The reported values the engine shares with the client (tiers, match results,
// NodeTiers: strata/report/) have their one converter in store/proto
// (strata/proto/report_convert.h); this is the place for the rest of store/core's types.
// Field by field; nothing is dropped except what the wire has no field for
// (BlobInfo.extent).
//
// Times: the engine hands out absolute instants of its Clock (lease expiry, put
// deadline). The wire carries durations relative to the node's answer, so each
// conversion takes `now` (read from the same Clock) and writes
//   expires_in_ms = max(0, floor((expiry - now) / 1 ms))
// Wall-clock record times (created, last access) become milliseconds since the Unix
// epoch, 0 for an instant before 1970 (InfinitePast: never).
//
// Errors: none; every conversion is total. REQUIRES: every `out` is non-null.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "strata/proto/limits.h"
#include "strata/proto/protocol_internal.h"
#include "strata/radix/kv_layout.h"
#include "strata/store/core/node_engine_types.h"
#include "strata/tiering/tier.h"

namespace strata::store::rpc {

// ---------------------------------------------------------------- times

// max(0, whole milliseconds from `now` until `expiry`).
uint64_t ExpiresInMs(absl::Time expiry, absl::Time now);

// Milliseconds since the Unix epoch; 0 for instants before it.
uint64_t UnixMillis(absl::Time time);

// ---------------------------------------------------------------- Store replies

// `data_plane` is where PUT_DATA goes ("host:port"); left unset when reply.exists.
void BeginPutToProto(const core::BeginPutReply& reply, absl::Time now, std::string_view data_plane,
                     v1::BeginPutResponse* out);

void CommitPutToProto(const core::CommitPutReply& reply, v1::CommitPutResponse* out);

// `ranges` are the ranges the Read asked for (reply.ranges[i] answers ranges[i]) and
// `layout` the namespace's layout: they give each grant its blob key and chunk size.
// REQUIRES: reply.ranges.size() == ranges.size().
void ReadToProto(const core::ReadReply& reply, absl::Span<const core::ReadRange> ranges,
                 const radix::KvLayout& layout, absl::Time now, std::string_view data_plane,
                 v1::ReadResponse* out);

void DeleteToProto(const core::DeleteReply& reply, v1::DeleteResponse* out);

// Every field of the record; tokens only as far as `info.tokens` holds them.
void BlobInfoToProto(const core::BlobInfo& info, v1::BlobInfo* out);

void ListToProto(const core::ListReply& reply, v1::ListResponse* out);

// ---------------------------------------------------------------- rebuild from text

void PrefetchToProto(const core::PrefetchReply& reply, v1::PrefetchResponse* out);

void RebuildRequestToProto(const core::RebuildRequestReply& reply, v1::RequestRebuildResponse* out);

// Every field; the deadline becomes expires_in_ms (above). A task without a namespace (the
// engine always sets one) leaves `ns` unset.
void RebuildTaskToProto(const core::RebuildTask& task, absl::Time now, v1::RebuildTask* out);

// ---------------------------------------------------------------- Admin replies

void EvictToProto(const core::EvictReply& reply, v1::EvictResponse* out);

}  // namespace strata::store::rpc
