// The public types of strata/types.h <-> their strata.v1 messages. The client's only
// conversions of node answers; requests are built in the .cc files that send them.
//
// Node answers are trusted to be well formed except where a bad value could make the
// client misbehave: a tier value outside the enum becomes INTERNAL in the answer that
// carries it (naming the field), a blob record with an invalid namespace is INTERNAL.
//
// Pure functions; thread-safe.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"

#include "client/lib/read_plan.h"
#include "strata/proto/protocol_internal.h"
#include "strata/types.h"

namespace strata::client_internal {

v1::Tier ToProto(Tier tier);
absl::StatusOr<Tier> TierFromProto(int value, std::string_view field);

absl::StatusOr<MatchResult> MatchResultFromProto(const v1::MatchResponse& response);
// INTERNAL (the node broke the contract) for an unknown tier or a bad namespace, and for `tokens`
// that are not whole 4-byte ids or exceed kMaxTokensPerRequest.
absl::StatusOr<BlobInfo> BlobInfoFromProto(const v1::BlobInfo& info, std::string_view field);
absl::StatusOr<TiersInfo> TiersInfoFromProto(const v1::TiersResponse& response);
HealthInfo HealthInfoFromProto(const v1::HealthResponse& response);
// A view of the grant (its checksums point into `grant`).

}  // namespace strata::client_internal
