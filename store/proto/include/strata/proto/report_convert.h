// The reported values (strata/report/: tiers, lookup phases and counts, tier and engine
// statistics, curves, match segments) <-> their strata.v1 messages. The one converter of
// each: the node's adapters (store/rpc) write them, the client (client/lib) reads them.
//
// Writing is total. Reading checks what could make a reader misbehave and answers
// INVALID_ARGUMENT naming the field:
//   TierFromProto   "<field>: missing" (TIER_UNSPECIFIED), "<field>: unknown value N"
//   PhaseFromProto  "<field>: unknown value N" (PHASE_UNSPECIFIED is kUnspecified)
//   PhaseToProto    "<field>: N is not a LookupPhase" (a value outside the enum)
//   MatchFromProto  a segment's tier as TierFromProto, or tokens that are not whole 4-byte
//                   ids or exceed kMaxTokensPerRequest ("segments[i].tokens: ...")
//   TiersFromProto  a byte tier's tier as TierFromProto ("tiers[i].tier")
// A client receiving an answer turns these into INTERNAL (the node broke the contract);
// a node receiving a request returns them as they are. Values added to the wire after
// v1's first release are read as types.proto's compatibility rules say old peers read new
// enum values: a LookupStats of a phase, or a TierCurve of a tier, that the reader does
// not know is left out of NodeTiers (only those entries; the rest of the answer stands).
//
// Limits of what is written (strata/proto/limits.h): a MatchResponse carries at most
// `max_segments` segments and its TEXT segments at most `max_text_tokens` tokens between
// them; past either, the answer is cut at a segment boundary (the segment that would pass
// a limit is left out, with all after it), matched_pages shrinks to the pages the kept
// segments cover and `truncated` is set. Curves carry at most kMaxCurvePoints points
// (evenly thinned, the first and last kept) and advice at most kMaxAdviceBytes.
//
// Pure functions; thread-safe. REQUIRES: every `out` is non-null.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "strata/proto/limits.h"
#include "strata/proto/protocol_internal.h"
#include "strata/report/curve.h"
#include "strata/report/lookup.h"
#include "strata/report/match.h"
#include "strata/report/node_tiers.h"
#include "strata/report/tier.h"

namespace strata::proto {

// ---------------------------------------------------------------- enums

// Same numbers; a value outside report::Tier becomes TIER_UNSPECIFIED.
v1::Tier TierToProto(report::Tier tier);
absl::StatusOr<report::Tier> TierFromProto(int value, std::string_view field);

absl::StatusOr<v1::Phase> PhaseToProto(report::LookupPhase phase, std::string_view field = "phase");
absl::StatusOr<report::LookupPhase> PhaseFromProto(int value, std::string_view field);

// ---------------------------------------------------------------- Match

void MatchToProto(const report::MatchResult& match, v1::MatchResponse* out,
                  size_t max_segments = kMaxMatchSegments,
                  size_t max_text_tokens = kMaxMatchTextTokens);
absl::StatusOr<report::MatchResult> MatchFromProto(const v1::MatchResponse& response);

// ---------------------------------------------------------------- Tiers

void ToProto(const report::TierStats& stats, v1::TierStats* out);
void ToProto(const report::TextTierStats& stats, v1::TextTierStats* out);
void ToProto(const report::RebuildQueueStats& stats, v1::RebuildQueueStats* out);
void ToProto(const report::IndexStats& stats, v1::IndexStats* out);
void ToProto(const report::EngineStats& stats, v1::EngineStats* out);
// PhaseToProto's failure cannot happen for counts the engine keeps; such a phase is written
// as PHASE_UNSPECIFIED (and left out by every reader).
void ToProto(const report::LookupCounts& counts, v1::LookupStats* out);
void ToProto(const report::MissRatioCurve& curve, v1::MissRatioCurve* out);
void ToProto(const report::TierCurve& curve, v1::TierCurve* out);
void ToProto(const report::NodeTiers& tiers, v1::TiersResponse* out);

absl::StatusOr<report::TierStats> TierStatsFromProto(const v1::TierStats& stats,
                                                     std::string_view field);
report::TextTierStats FromProto(const v1::TextTierStats& stats);
report::RebuildQueueStats FromProto(const v1::RebuildQueueStats& stats);
report::IndexStats FromProto(const v1::IndexStats& stats);
report::EngineStats FromProto(const v1::EngineStats& stats);
report::MissRatioCurve FromProto(const v1::MissRatioCurve& curve);
absl::StatusOr<report::NodeTiers> TiersFromProto(const v1::TiersResponse& response);

// `points` into `out` (cleared first): all of them when there are at most `max_points`,
// else `max_points` of them at evenly spaced indices, the first and the last included.
// REQUIRES: max_points >= 1.
void CurvePointsToProto(absl::Span<const report::CurvePoint> points, size_t max_points,
                        google::protobuf::RepeatedPtrField<v1::CurvePoint>* out);

// `advice`, cut to at most `max_bytes` bytes without splitting a UTF-8 character.
std::string CutAdvice(std::string_view advice, size_t max_bytes);

}  // namespace strata::proto
