// FormatTiersJson: a NodeSnapshot as the /v1/tiers JSON document for capacity planning —
// each tier's stats with its miss-ratio view (curve points, expected hit ratio at the
// current capacity, the recommendation and its advice), the page lookups by phase, and the
// raw live miss-ratio curve. The document's shape is in docs/api.md ("HTTP endpoint").
//
// Numbers are written so that they parse back exactly (integers as integers; ratios in the
// shortest round-trip form; a non-finite ratio as null); strings are escaped per RFC 8259
// (JsonEscape). Pure functions; thread-safe. No errors.
#pragma once

#include <string>
#include <string_view>

#include "strata/store/http/node_snapshot.h"

namespace strata::store::http {

// The /v1/tiers body (one JSON object, newline-terminated).
std::string FormatTiersJson(const NodeSnapshot& snapshot);

// `text` as a JSON string literal, quotes included: `"` `\` and control characters
// escaped (\n, \t, ... or \u00XX); other bytes (UTF-8 included) as they are.
std::string JsonEscape(std::string_view text);

}  // namespace strata::store::http
