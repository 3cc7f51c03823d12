// The node engine's reply values (store/core/node_engine_types.h) -> their strata.v1
// messages, and the tier enum in both directions.
//
// The one place store/core's types meet the wire (store/proto converts radix types and
// statuses; it may not depend on store/core). Field by field; nothing is dropped except
// what the wire has no field for (BlobInfo.extent).
//
// Times: the engine hands out absolute instants of its Clock (lease expiry, put
// deadline). The wire carries durations relative to the node's answer, so each
// conversion takes `now` (read from the same Clock) and writes
//   expires_in_ms = max(0, floor((expiry - now) / 1 ms))
// Wall-clock record times (created, last access) become milliseconds since the Unix
// epoch, 0 for an instant before 1970 (InfinitePast: never).
//
// Match truncation: a MatchResponse carries at most `max_segments` segments
// (kMaxMatchSegments on the wire), and its TEXT segments at most `max_text_tokens` tokens
// between them (kMaxMatchTextTokens). Past either the answer is cut at a segment boundary
// (the segment that would pass a limit is left out, with all after it), `matched_pages`
// shrinks to the pages the kept segments cover (so the segments still cover
// [0, matched_pages) without gaps) and `truncated` is set.
//
// Errors: only TierFromProto and TierStateFromProto fail, with INVALID_ARGUMENT (below).
// Everything else is total. REQUIRES: every `out` is non-null.
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
#include "strata/tiering/mrc/miss_ratio_curve.h"
#include "strata/tiering/tier.h"

namespace strata::store::rpc {

// ---------------------------------------------------------------- tiers and times

// kHbm -> TIER_HBM, kDram -> TIER_DRAM, kSsd -> TIER_SSD.
v1::Tier TierToProto(tiering::TierKind tier);

// The byte tier named by `value`. INVALID_ARGUMENT "<field>: missing" for
// TIER_UNSPECIFIED, "<field>: TIER_TEXT holds no bytes" for TIER_TEXT, "<field>: unknown
// value N" for a number the wire does not define.
absl::StatusOr<tiering::TierKind> TierFromProto(int value, std::string_view field);
// A tier state (TIER_TEXT included) to and from the wire; TierStateFromProto is
// TierFromProto plus TIER_TEXT.
v1::Tier TierStateToProto(core::TierState state);
absl::StatusOr<core::TierState> TierStateFromProto(int value, std::string_view field);

// max(0, whole milliseconds from `now` until `expiry`).
uint64_t ExpiresInMs(absl::Time expiry, absl::Time now);

// Milliseconds since the Unix epoch; 0 for instants before it.
uint64_t UnixMillis(absl::Time time);

// ---------------------------------------------------------------- Store replies

// TEXT segments carry their tokens (Segment.tokens); other tiers none.
void MatchToProto(const core::MatchReply& reply, v1::MatchResponse* out,
                  size_t max_segments = proto::kMaxMatchSegments,
                  size_t max_text_tokens = proto::kMaxMatchTextTokens);

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

// The byte tiers (DRAM, then SSD when the node has one) with their pages, the TEXT tier,
// the rebuild queue, the index and the engine counts; the lookups of each phase (prefill,
// midfill, decode, in that order); the miss-ratio curve and the per-tier curves (a curve
// whose tier name is not "hbm", "dram", "ssd" or "text" is left out, logged once), their
// points thinned to kMaxCurvePoints and advice cut to kMaxAdviceBytes (below).
void TiersToProto(const core::NodeTiers& tiers, v1::TiersResponse* out);

// `points` into `out` (cleared first): all of them when there are at most `max_points`,
// else `max_points` of them at evenly spaced indices, the first and the last included.
// REQUIRES: max_points >= 1.
void CurvePointsToProto(absl::Span<const tiering::mrc::CurvePoint> points, size_t max_points,
                        google::protobuf::RepeatedPtrField<v1::CurvePoint>* out);

// `advice`, cut to at most `max_bytes` bytes without splitting a UTF-8 character.
std::string CutAdvice(std::string_view advice, size_t max_bytes);

void EvictToProto(const core::EvictReply& reply, v1::EvictResponse* out);

}  // namespace strata::store::rpc
