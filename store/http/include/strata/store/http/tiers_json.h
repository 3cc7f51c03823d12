// FormatTiersJson: a NodeSnapshot as the /v1/tiers JSON document for capacity planning —
// each tier's stats with its miss-ratio view (curve points, expected hit ratio at the
// current capacity, the recommendation and its advice), the page lookups by phase, and the
// raw live miss-ratio curve. The document's shape is in docs/api.md ("HTTP endpoint").
//
// Written with nlohmann/json: numbers parse back exactly (integers as integers; ratios in
// the shortest round-trip form; a non-finite ratio as null); strings are escaped per RFC
// 8259 (`"` `\` and control characters; other UTF-8 as it is; bytes that are not UTF-8 as
// U+FFFD). Keys in the order docs/api.md lists them. Pure function; thread-safe. No errors.
#pragma once

#include <string>

#include "strata/store/http/node_snapshot.h"

namespace strata::store::http {

// The /v1/tiers body (one JSON object, newline-terminated).
std::string FormatTiersJson(const NodeSnapshot& snapshot);

}  // namespace strata::store::http
