#include "strata/tiering/sim/mooncake_trace.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

#include "strata/base/status_macros.h"

namespace strata::tiering::sim {
namespace {

constexpr int kMaxDepth = 64;

// A recursive-descent reader of one JSON line: just enough JSON to read the trace's objects
// and skip anything else. Errors carry the line number and a 1-based column.
class JsonLine {
 public:
  JsonLine(std::string_view text, uint64_t line) : text_(text), line_(line) {}

  // The fields of one request object.
  struct Request {
    std::optional<std::vector<uint64_t>> hash_ids;
    std::optional<double> timestamp;
    std::optional<double> input_length;
  };

  absl::StatusOr<Request> ParseRequest() {
    Request request;
    SkipSpace();
    if (!Consume('{')) return Error("expected '{' (each line is one JSON object)");
    SkipSpace();
    if (!Consume('}')) {
      while (true) {
        SkipSpace();
        std::string key;
        STRATA_RETURN_IF_ERROR(ParseString(&key));
        SkipSpace();
        if (!Consume(':')) return Error("expected ':' after a key");
        SkipSpace();
        if (key == "hash_ids") {
          request.hash_ids.emplace();
          STRATA_RETURN_IF_ERROR(ParseIdArray(&*request.hash_ids));
        } else if (key == "timestamp" || key == "input_length") {
          double value = 0;
          STRATA_RETURN_IF_ERROR(ParseNumber(&value, /*integer=*/nullptr, key));
          (key == "timestamp" ? request.timestamp : request.input_length) = value;
        } else {
          STRATA_RETURN_IF_ERROR(SkipValue(0));
        }
        SkipSpace();
        if (Consume('}')) break;
        if (!Consume(',')) return Error("expected ',' or '}' in the object");
      }
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the object");
    return request;
  }

  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("line ", line_, ", column ", pos_ + 1, ": ",
                                                   absl::string_view(what.data(), what.size())));
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  bool Consume(char c) {
    if (Peek() != c || AtEnd()) return false;
    ++pos_;
    return true;
  }
  void SkipSpace() {
    while (!AtEnd() && (Peek() == ' ' || Peek() == '\t' || Peek() == '\r' || Peek() == '\n')) {
      ++pos_;
    }
  }

  absl::Status ParseString(std::string* out) {
    if (!Consume('"')) return Error("expected a string");
    while (!AtEnd()) {
      const char c = text_[pos_++];
      if (c == '"') return absl::OkStatus();
      if (static_cast<unsigned char>(c) < 0x20) return Error("control character in a string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (AtEnd()) break;
      const char escaped = text_[pos_++];
      switch (escaped) {
        case '"':
        case '\\':
        case '/':
          out->push_back(escaped);
          break;
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
          out->push_back(' ');
          break;
        case 'u':
          for (int i = 0; i < 4; ++i) {
            if (AtEnd() || !std::isxdigit(static_cast<unsigned char>(Peek()))) {
              return Error("bad \\u escape");
            }
            ++pos_;
          }
          out->push_back('?');
          break;
        default:
          --pos_;
          return Error("bad escape in a string");
      }
    }
    return Error("unterminated string");
  }

  // A JSON number; `integer` (if given) receives it when it is an integer in [0, 2^63).
  absl::Status ParseNumber(double* value, std::optional<uint64_t>* integer, std::string_view what) {
    const size_t start = pos_;
    Consume('-');
    while (!AtEnd() && (std::isdigit(static_cast<unsigned char>(Peek())) || Peek() == '.' ||
                        Peek() == 'e' || Peek() == 'E' || Peek() == '+' || Peek() == '-')) {
      ++pos_;
    }
    const std::string_view lexeme = text_.substr(start, pos_ - start);
    const absl::string_view token(lexeme.data(), lexeme.size());
    if (lexeme.empty() || !absl::SimpleAtod(token, value)) {
      pos_ = start;
      return Error(
          absl::StrCat("expected a number for ", absl::string_view(what.data(), what.size())));
    }
    if (integer != nullptr) {
      uint64_t parsed = 0;
      if (absl::SimpleAtoi(token, &parsed) && parsed < (uint64_t{1} << 63)) *integer = parsed;
    }
    return absl::OkStatus();
  }

  absl::Status ParseIdArray(std::vector<uint64_t>* ids) {
    if (!Consume('[')) return Error("hash_ids is not an array");
    SkipSpace();
    if (Consume(']')) return absl::OkStatus();
    while (true) {
      SkipSpace();
      const size_t start = pos_;
      double value = 0;
      std::optional<uint64_t> id;
      STRATA_RETURN_IF_ERROR(ParseNumber(&value, &id, "a hash id"));
      if (!id.has_value()) {
        pos_ = start;
        return Error("a hash id is not an integer in [0, 2^63)");
      }
      ids->push_back(*id);
      SkipSpace();
      if (Consume(']')) return absl::OkStatus();
      if (!Consume(',')) return Error("expected ',' or ']' in hash_ids");
    }
  }

  absl::Status SkipValue(int depth) {
    if (depth > kMaxDepth) return Error("nested too deeply");
    SkipSpace();
    const char c = Peek();
    if (c == '"') {
      std::string ignored;
      return ParseString(&ignored);
    }
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++pos_;
      SkipSpace();
      if (Consume(close)) return absl::OkStatus();
      while (true) {
        SkipSpace();
        if (c == '{') {
          std::string key;
          STRATA_RETURN_IF_ERROR(ParseString(&key));
          SkipSpace();
          if (!Consume(':')) return Error("expected ':' after a key");
        }
        STRATA_RETURN_IF_ERROR(SkipValue(depth + 1));
        SkipSpace();
        if (Consume(close)) return absl::OkStatus();
        if (!Consume(',')) return Error("expected ',' or a closing bracket");
      }
    }
    for (std::string_view literal : {"true", "false", "null"}) {
      if (text_.substr(pos_, literal.size()) == literal) {
        pos_ += literal.size();
        return absl::OkStatus();
      }
    }
    double ignored = 0;
    return ParseNumber(&ignored, nullptr, "a value");
  }

  std::string_view text_;
  uint64_t line_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<ReplayTrace> ParseMooncakeTrace(std::string_view text,
                                               const MooncakeTraceOptions& options) {
  const uint32_t block_tokens = options.block_tokens;
  if (block_tokens == 0) return absl::InvalidArgumentError("block_tokens is 0");
  ReplayTrace trace;
  trace.name = "mooncake";
  trace.block_tokens = block_tokens;
  absl::flat_hash_map<BlobId, BlobId> parent_of;  // a prefix trace has one parent per block
  uint64_t line_number = 0;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    JsonLine reader(line, line_number);
    STRATA_ASSIGN_OR_RETURN(JsonLine::Request parsed, reader.ParseRequest());
    if (!parsed.hash_ids.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": no hash_ids"));
    }
    ReplayRequest request;
    request.blocks.reserve(parsed.hash_ids->size());
    BlobId parent = 0;
    for (const uint64_t id : *parsed.hash_ids) {
      const BlobId block = id + 1;
      const auto [it, inserted] = parent_of.emplace(block, parent);
      if (!inserted && it->second != parent) {
        const auto id_of = [](BlobId blob) {
          return blob == 0 ? std::string("the start") : absl::StrCat("hash id ", blob - 1);
        };
        return absl::InvalidArgumentError(
            absl::StrCat("line ", line_number, ": hash id ", id, " follows ", id_of(parent),
                         " here but ", id_of(it->second), " earlier (not a prefix trace)"));
      }
      request.blocks.push_back(block);
      parent = block;
    }
    request.timestamp_ms = parsed.timestamp.value_or(0);
    if (!request.blocks.empty()) {
      request.last_block_tokens = block_tokens;
      if (parsed.input_length.has_value()) {
        const double full = static_cast<double>(block_tokens) * (request.blocks.size() - 1);
        const double last =
            std::clamp(*parsed.input_length - full, 1.0, static_cast<double>(block_tokens));
        request.last_block_tokens = static_cast<uint32_t>(last);
      }
      if (options.drop_partial_last_block && request.last_block_tokens < block_tokens) {
        request.blocks.pop_back();
        request.last_block_tokens = request.blocks.empty() ? 0 : block_tokens;
      }
    }
    trace.requests.push_back(std::move(request));
  }
  return trace;
}

absl::StatusOr<ReplayTrace> LoadMooncakeTrace(const std::string& path,
                                              const MooncakeTraceOptions& options) {
  std::ifstream file(path, std::ios::binary);
  if (!file.is_open()) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad()) return absl::DataLossError(absl::StrCat("reading ", path, " failed"));
  absl::StatusOr<ReplayTrace> trace = ParseMooncakeTrace(contents.str(), options);
  if (!trace.ok()) {
    return absl::Status(trace.status().code(), absl::StrCat(path, ": ", trace.status().message()));
  }
  return trace;
}

}  // namespace strata::tiering::sim
