// JsonWriter: builds one compact JSON text (RFC 8259) for the CLI's --json output.
//
//   JsonWriter json;
//   json.BeginObject();
//   json.Key("key").String(info.key.ToHex());
//   json.Key("pages").Uint(info.pages);
//   json.Key("tiers").BeginArray().String("dram").EndArray();
//   json.EndObject();
//   std::string text = json.Take();   // {"key":"3f0c...","pages":4,"tiers":["dram"]}
//
// Commas and nesting are tracked; strings are escaped: `"` and `\` with a backslash, the
// control characters U+0000..U+001F as \b \f \n \r \t or \u00XX, and every byte sequence
// that is not well-formed UTF-8 (stray continuation bytes, overlongs, surrogates, code
// points past U+10FFFF, truncated sequences) as U+FFFD, one per bad byte, so the output is
// always valid UTF-8 and valid JSON whatever bytes a node sent. Integers are written
// exactly (uint64/int64). Scripts should read 64-bit hashes and checksums from the hex
// strings the CLI prints, not from numbers (JavaScript's doubles hold 53 bits).
//
// Misuse (a value where a key is due, EndObject closing an array, Take with open
// containers) is a bug: CHECK failure. Not thread-safe (one writer per object).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::cli {

class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  // The next member's name. REQUIRES: inside an object, no key pending.
  JsonWriter& Key(const std::string& name);

  JsonWriter& String(const std::string& value);
  JsonWriter& Uint(uint64_t value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  // A finite double in its shortest round-trip form; NaN and infinities become null.
  JsonWriter& Double(double value);

  // The text, after the outermost value closed. REQUIRES: exactly one complete value.
  std::string Take();

  // `value` as a JSON string literal, quotes included.
  static std::string Quote(const std::string& value);

 private:
  enum class Frame { kObject, kArray };
  void BeforeValue();

  std::string out_;
  std::vector<Frame> stack_;
  std::vector<bool> has_members_;  // parallel to stack_
  bool key_pending_ = false;
  bool done_ = false;
};

}  // namespace strata::cli
