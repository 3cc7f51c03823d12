// The public types of strata/types.h <-> their strata.v1 messages. The client's only
// conversions of node answers; requests are built in the .cc files that send them.
//
// Node answers are trusted to be well formed except where a bad value could make the
// client misbehave: a tier value outside the enum becomes INTERNAL in the answer that
// carries it (naming the field: "segments[2].tier: unknown value 9"), a blob record with an invalid
// namespace is INTERNAL, and so are token fields that are not whole 4-byte ids (Match's TEXT
// segments, Stat, rebuild tasks) and rebuild tasks whose shape does not add up. Statistics added
// after v1's first release are read as the compatibility rules of types.proto say old peers read
// new enum values: a LookupStats of a phase, or a TierCurve of a tier, the client does not know is
// left out of NodeTiers (only those entries; the rest of the answer stands).
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "client/lib/read_plan.h"
#include "strata/proto/protocol_internal.h"
#include "strata/types.h"

namespace strata::client_internal {

// The reported values (Tier, LookupPhase, MatchResult, NodeTiers) are read with their one
// converter, strata/proto/report_convert.h; these turn its INVALID_ARGUMENT into INTERNAL
// (the node broke the contract), keeping the message.
absl::StatusOr<MatchResult> MatchResultFromProto(const v1::MatchResponse& response);
// INTERNAL (the node broke the contract) for an unknown tier or a bad namespace, and for `tokens`
// that are not whole 4-byte ids or exceed kMaxTokensPerRequest.
absl::StatusOr<BlobInfo> BlobInfoFromProto(const v1::BlobInfo& info, std::string_view field);
absl::StatusOr<NodeTiers> NodeTiersFromProto(const v1::TiersResponse& response);
HealthInfo HealthInfoFromProto(const v1::HealthResponse& response);
PrefetchResult PrefetchResultFromProto(const v1::PrefetchResponse& response);
RebuildRequestResult RebuildRequestResultFromProto(const v1::RequestRebuildResponse& response);
void SegmentStartToProto(const SegmentStart& start, v1::SegmentStart* out);
// `now` is this client's clock when the answer came: deadline = now + expires_in_ms.
// INTERNAL (naming `field`) for a task without a valid namespace or key, ragged or oversized
// sequence_tokens, fewer sequence tokens than its pages need, or a checksum count other
// than num_layers * pages.
absl::StatusOr<RebuildTask> RebuildTaskFromProto(const v1::RebuildTask& task, absl::Time now,
                                                 std::string_view field);

}  // namespace strata::client_internal
