// ParseJson: reads one JSON text (RFC 8259) for tests that look inside what strata wrote
// (/v1/tiers, `strata --json`). Test-only (strata::testing); the parsing is nlohmann/json's.
//
// Strict: exactly one value with optional surrounding whitespace; nlohmann's parser rejects
// trailing commas, single quotes, leading zeros, raw control characters in strings, bad
// escapes, unpaired surrogate escapes, invalid UTF-8 and trailing bytes, and ParseJson also
// rejects an object that names a key twice. Integers stay integers: a number without a
// fraction or exponent is number_unsigned (or number_integer when negative), exact to 64 bits.
//
// AsUint, AsString and AsBool read a value for an assertion without throwing: the value
// when it has that type, else nullopt, "" or false (a missing member read through a
// non-const operator[] is null).
//
// Errors: INVALID_ARGUMENT with nlohmann's message (it names the byte offset).
// Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

#include "nlohmann/json.hpp"

namespace strata::testing {

absl::StatusOr<nlohmann::json> ParseJson(std::string_view text);

// An integer >= 0 (written without fraction or exponent); nullopt for anything else.
std::optional<uint64_t> AsUint(const nlohmann::json& value);
// The string; "" when `value` is not a string.
std::string AsString(const nlohmann::json& value);
// The boolean; false when `value` is not one.
bool AsBool(const nlohmann::json& value);

}  // namespace strata::testing
