#include "client/cli/testing/json_value.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace strata::cli::testing {

std::optional<uint64_t> JsonValue::AsUint() const {
  uint64_t value = 0;
  if (type_ != Type::kNumber || text_.find_first_not_of("0123456789") != std::string::npos ||
      !absl::SimpleAtoi(text_, &value)) {
    return std::nullopt;
  }
  return value;
}

const JsonValue& JsonValue::operator[](const std::string& key) const {
  static const JsonValue* const kNull = new JsonValue();
  auto it = members_.find(key);
  return it == members_.end() ? *kNull : it->second;
}

class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : s_(text) {}

  absl::StatusOr<JsonValue> ParseDocument() {
    JsonValue value;
    SkipBlanks();
    if (!ParseValue(&value, 0)) return Error();
    SkipBlanks();
    if (i_ != s_.size()) {
      error_ = "trailing characters";
      return Error();
    }
    return value;
  }

 private:
  absl::Status Error() const {
    return absl::InvalidArgumentError(absl::StrCat("json: ", error_, " at offset ", i_));
  }
  bool Fail(const char* message) {
    if (error_.empty()) error_ = message;
    return false;
  }
  void SkipBlanks() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) {
      ++i_;
    }
  }
  bool Literal(const char* word) {
    const std::string w(word);
    if (s_.compare(i_, w.size(), w) != 0) return Fail("unknown literal");
    i_ += w.size();
    return true;
  }

  bool ParseValue(JsonValue* out, int depth) {
    if (depth > 200) return Fail("nesting too deep");
    if (i_ >= s_.size()) return Fail("unexpected end");
    const char c = s_[i_];
    if (c == '{') return ParseObject(out, depth);
    if (c == '[') return ParseArray(out, depth);
    if (c == '"') {
      out->type_ = JsonValue::Type::kString;
      return ParseString(&out->text_);
    }
    if (c == 't' || c == 'f') {
      out->type_ = JsonValue::Type::kBool;
      out->bool_ = c == 't';
      return Literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') {
      out->type_ = JsonValue::Type::kNull;
      return Literal("null");
    }
    return ParseNumber(out);
  }

  bool ParseObject(JsonValue* out, int depth) {
    out->type_ = JsonValue::Type::kObject;
    ++i_;
    SkipBlanks();
    if (i_ < s_.size() && s_[i_] == '}') {
      ++i_;
      return true;
    }
    while (true) {
      SkipBlanks();
      if (i_ >= s_.size() || s_[i_] != '"') return Fail("expected a member name");
      std::string key;
      if (!ParseString(&key)) return false;
      SkipBlanks();
      if (i_ >= s_.size() || s_[i_] != ':') return Fail("expected ':'");
      ++i_;
      SkipBlanks();
      JsonValue value;
      if (!ParseValue(&value, depth + 1)) return false;
      if (!out->members_.emplace(key, std::move(value)).second) {
        return Fail("duplicate member name");
      }
      SkipBlanks();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < s_.size() && s_[i_] == '}') {
        ++i_;
        return true;
      }
      return Fail("expected ',' or '}'");
    }
  }

  bool ParseArray(JsonValue* out, int depth) {
    out->type_ = JsonValue::Type::kArray;
    ++i_;
    SkipBlanks();
    if (i_ < s_.size() && s_[i_] == ']') {
      ++i_;
      return true;
    }
    while (true) {
      SkipBlanks();
      JsonValue value;
      if (!ParseValue(&value, depth + 1)) return false;
      out->items_.push_back(std::move(value));
      SkipBlanks();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < s_.size() && s_[i_] == ']') {
        ++i_;
        return true;
      }
      return Fail("expected ',' or ']'");
    }
  }

  bool Hex4(uint32_t* out) {
    if (i_ + 4 > s_.size()) return Fail("short \\u escape");
    uint32_t value = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[i_++];
      value <<= 4;
      if (h >= '0' && h <= '9') {
        value |= static_cast<uint32_t>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        value |= static_cast<uint32_t>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        value |= static_cast<uint32_t>(h - 'A' + 10);
      } else {
        return Fail("bad hex digit in \\u escape");
      }
    }
    *out = value;
    return true;
  }

  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xC0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xE0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // Well-formed UTF-8 sequence length at i_ (RFC 3629), 0 if none.
  size_t Utf8Length() const {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s_[k]); };
    const unsigned char b0 = b(i_);
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      n = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      n = 3;
      if (b0 == 0xE0) lo = 0xA0;
      if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      n = 4;
      if (b0 == 0xF0) lo = 0x90;
      if (b0 == 0xF4) hi = 0x8F;
    } else {
      return 0;
    }
    if (i_ + n > s_.size() || b(i_ + 1) < lo || b(i_ + 1) > hi) return 0;
    for (size_t k = 2; k < n; ++k) {
      if (b(i_ + k) < 0x80 || b(i_ + k) > 0xBF) return 0;
    }
    return n;
  }

  bool ParseString(std::string* out) {
    ++i_;  // opening quote
    while (true) {
      if (i_ >= s_.size()) return Fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return Fail("raw control character in string");
      if (c >= 0x80) {
        const size_t n = Utf8Length();
        if (n == 0) return Fail("invalid UTF-8 in string");
        out->append(s_, i_, n);
        i_ += n;
        continue;
      }
      if (c != '\\') {
        *out += static_cast<char>(c);
        ++i_;
        continue;
      }
      if (++i_ >= s_.size()) return Fail("unterminated escape");
      const char e = s_[i_++];
      switch (e) {
        case '"':
          *out += '"';
          break;
        case '\\':
          *out += '\\';
          break;
        case '/':
          *out += '/';
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'n':
          *out += '\n';
          break;
        case 'r':
          *out += '\r';
          break;
        case 't':
          *out += '\t';
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return Fail("unpaired low surrogate");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t low = 0;
            if (s_.compare(i_, 2, "\\u") != 0) return Fail("unpaired high surrogate");
            i_ += 2;
            if (!Hex4(&low)) return false;
            if (low < 0xDC00 || low > 0xDFFF) return Fail("unpaired high surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          AppendUtf8(cp, out);
          break;
        }
        default:
          return Fail("bad escape");
      }
    }
  }

  bool ParseNumber(JsonValue* out) {
    const size_t start = i_;
    auto digit = [&](size_t k) { return k < s_.size() && s_[k] >= '0' && s_[k] <= '9'; };
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (!digit(i_)) return Fail("expected a value");
    if (s_[i_] == '0') {
      ++i_;
      if (digit(i_)) return Fail("leading zero");
    } else {
      while (digit(i_)) ++i_;
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (!digit(i_)) return Fail("expected a digit after '.'");
      while (digit(i_)) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (!digit(i_)) return Fail("expected an exponent");
      while (digit(i_)) ++i_;
    }
    out->type_ = JsonValue::Type::kNumber;
    out->text_ = s_.substr(start, i_ - start);
    return true;
  }

  const std::string& s_;
  size_t i_ = 0;
  std::string error_;
};

absl::StatusOr<JsonValue> ParseJson(const std::string& text) {
  return JsonParser(text).ParseDocument();
}

}  // namespace strata::cli::testing
