// JsonValue and ParseJson: a strict little JSON (RFC 8259) parser for tests that read
// /v1/tiers. Test-only (strata::store_http_testing); not for production input.
//
// Errors: ParseJson returns INVALID_ARGUMENT "offset N: why" for anything that is not one
// complete JSON value (trailing bytes, bad escapes, control characters in strings, leading
// zeros, a comma before a closing bracket). \u escapes are kept only below 0x80 (else "?").
// Plain values; thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace strata::store::http::testing {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;  // kString: the unescaped string; kNumber: the literal
  std::vector<JsonValue> items;
  std::map<std::string, JsonValue> members;

  bool Has(const std::string& key) const { return members.count(key) > 0; }
  // members.at(key); a null value when absent.
  const JsonValue& operator[](const std::string& key) const;
};

absl::StatusOr<JsonValue> ParseJson(std::string_view text);

}  // namespace strata::store::http::testing
