#include "client/cli/json_writer.h"

#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "glog/logging.h"

namespace strata::cli {
namespace {

constexpr char kReplacement[] = "\\ufffd";

// Length of the well-formed UTF-8 sequence at s[i..), or 0 if it is not one (RFC 3629
// table: no overlongs, no surrogates, nothing past U+10FFFF).
size_t Utf8SequenceLength(const std::string& s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  size_t length = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + length > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

std::string JsonWriter::Quote(const std::string& value) {
  std::string out = "\"";
  for (size_t i = 0; i < value.size();) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (c < 0x20) {
            absl::StrAppendFormat(&out, "\\u%04x", c);
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    const size_t length = Utf8SequenceLength(value, i);
    if (length == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(value, i, length);
      i += length;
    }
  }
  out += '"';
  return out;
}

void JsonWriter::BeforeValue() {
  CHECK(!done_) << "JsonWriter: a second top-level value";
  if (stack_.empty()) return;
  if (stack_.back() == Frame::kObject) {
    CHECK(key_pending_) << "JsonWriter: a value inside an object needs a Key first";
    key_pending_ = false;
    return;
  }
  if (has_members_.back()) out_ += ',';
  has_members_.back() = true;
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_ += '{';
  stack_.push_back(Frame::kObject);
  has_members_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  CHECK(!stack_.empty() && stack_.back() == Frame::kObject && !key_pending_)
      << "JsonWriter: EndObject without an open object (or after a dangling Key)";
  out_ += '}';
  stack_.pop_back();
  has_members_.pop_back();
  done_ = stack_.empty();
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  stack_.push_back(Frame::kArray);
  has_members_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  CHECK(!stack_.empty() && stack_.back() == Frame::kArray)
      << "JsonWriter: EndArray without an open array";
  out_ += ']';
  stack_.pop_back();
  has_members_.pop_back();
  done_ = stack_.empty();
  return *this;
}

JsonWriter& JsonWriter::Key(const std::string& name) {
  CHECK(!stack_.empty() && stack_.back() == Frame::kObject && !key_pending_)
      << "JsonWriter: Key outside an object or after another Key";
  if (has_members_.back()) out_ += ',';
  has_members_.back() = true;
  out_ += Quote(name);
  out_ += ':';
  key_pending_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(const std::string& value) {
  BeforeValue();
  out_ += Quote(value);
  done_ = stack_.empty();
  return *this;
}

JsonWriter& JsonWriter::Uint(uint64_t value) {
  BeforeValue();
  absl::StrAppend(&out_, value);
  done_ = stack_.empty();
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  BeforeValue();
  absl::StrAppend(&out_, value);
  done_ = stack_.empty();
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
  done_ = stack_.empty();
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
  done_ = stack_.empty();
  return *this;
}

JsonWriter& JsonWriter::Double(double value) {
  if (!std::isfinite(value)) return Null();
  BeforeValue();
  char buffer[32];
  const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  CHECK(result.ec == std::errc());
  out_.append(buffer, result.ptr);
  done_ = stack_.empty();
  return *this;
}

std::string JsonWriter::Take() {
  CHECK(done_) << "JsonWriter: Take before the value is complete";
  done_ = false;
  return std::move(out_);
}

}  // namespace strata::cli
