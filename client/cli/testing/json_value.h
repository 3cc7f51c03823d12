// JsonValue: a small strict JSON (RFC 8259) parser for tests of the CLI's --json output.
// Test-only (the CLI itself only writes JSON): tests parse what `strata --json` printed and
// look inside it.
//
// ParseJson accepts exactly one value with optional surrounding whitespace and rejects
// everything RFC 8259 does not allow: trailing commas, single quotes, leading zeros, raw
// control characters in strings, bad escapes, unpaired surrogate escapes, invalid UTF-8,
// trailing garbage. Numbers keep their text (exact 64-bit integers via AsUint).
// Errors: INVALID_ARGUMENT with the byte offset. Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace strata::cli::testing {

class JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_object() const { return type_ == Type::kObject; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_number() const { return type_ == Type::kNumber; }
  bool is_bool() const { return type_ == Type::kBool; }

  bool AsBool() const { return bool_; }
  const std::string& AsString() const { return text_; }  // decoded string, or number text
  // The number as an unsigned integer; nullopt if it is not one (or does not fit).
  std::optional<uint64_t> AsUint() const;
  const std::vector<JsonValue>& items() const { return items_; }
  const std::map<std::string, JsonValue>& members() const { return members_; }
  bool Has(const std::string& key) const { return members_.count(key) != 0; }
  // The member `key`; a null value when absent.
  const JsonValue& operator[](const std::string& key) const;
  const JsonValue& operator[](size_t index) const { return items_.at(index); }
  size_t size() const { return type_ == Type::kArray ? items_.size() : members_.size(); }

 private:
  friend class JsonParser;
  Type type_ = Type::kNull;
  bool bool_ = false;
  std::string text_;
  std::vector<JsonValue> items_;
  std::map<std::string, JsonValue> members_;
};

absl::StatusOr<JsonValue> ParseJson(const std::string& text);

}  // namespace strata::cli::testing
