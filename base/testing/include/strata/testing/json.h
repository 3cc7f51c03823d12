// ParseJson: reads one JSON text (RFC 8259) for tests that look inside what strata wrote
// (/v1/tiers, `strata --json`). Test-only (strata::testing); the parsing is nlohmann/json's.
//
// Strict: exactly one value with optional surrounding whitespace; nlohmann's parser rejects
// trailing commas, single quotes, leading zeros, raw control characters in strings, bad
// escapes, unpaired surrogate escapes, invalid UTF-8 and trailing bytes, and ParseJson also
// rejects an object that names a key twice. Integers stay integers: a number without a
// fraction or exponent is number_unsigned (or number_integer when negative), exact to 64 bits.
//
// Errors: INVALID_ARGUMENT with nlohmann's message (it names the byte offset).
// Thread-safe (no shared state).
#pragma once

#include <string_view>

#include "absl/status/statusor.h"

#include "nlohmann/json.hpp"

namespace strata::testing {

absl::StatusOr<nlohmann::json> ParseJson(std::string_view text);

}  // namespace strata::testing
