#include "client/cli/token_file.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include "client/cli/exit_codes.h"
#include "client/cli/local_files.h"

namespace strata::cli {
namespace {

bool IsSeparator(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == ',';
}

// What the user sees of a bad token: at most 40 bytes, non-printables as '?'.
std::string Shown(const std::string& text) {
  std::string shown = text.substr(0, 40);
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return text.size() > 40 ? shown + "..." : shown;
}

}  // namespace

absl::StatusOr<std::vector<radix::TokenId>> ParseTokens(const std::string& text) {
  // Strip one pair of enclosing brackets (surrounded by separators only).
  size_t begin = 0;
  size_t end = text.size();
  while (begin < end && IsSeparator(text[begin])) ++begin;
  while (end > begin && IsSeparator(text[end - 1])) --end;
  const bool open = begin < end && text[begin] == '[';
  const bool close = end > begin && text[end - 1] == ']';
  if (open != close || (open && end - begin < 2)) {
    return absl::InvalidArgumentError(open ? "\"[\" without a closing \"]\""
                                           : "\"]\" without an opening \"[\"");
  }
  if (open) {
    ++begin;
    --end;
  }

  std::vector<radix::TokenId> tokens;
  int line = 1;
  for (size_t i = 0; i < begin; ++i) line += text[i] == '\n';
  size_t i = begin;
  while (i < end) {
    if (IsSeparator(text[i])) {
      line += text[i] == '\n';
      ++i;
      continue;
    }
    size_t j = i;
    while (j < end && !IsSeparator(text[j])) ++j;
    const std::string word = text.substr(i, j - i);
    uint64_t value = 0;
    bool ok = word.size() <= 10;
    for (char c : word) {
      ok = ok && c >= '0' && c <= '9';
      if (ok) value = value * 10 + static_cast<uint64_t>(c - '0');
    }
    if (!ok || value > UINT32_MAX) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line, ": \"", Shown(word),
                                                     "\" is not a token id (an integer in "
                                                     "0..4294967295)"));
    }
    tokens.push_back(static_cast<radix::TokenId>(value));
    i = j;
  }
  return tokens;
}

absl::StatusOr<std::vector<radix::TokenId>> ReadTokenFile(const std::string& path,
                                                          std::istream& stdin_stream) {
  absl::StatusOr<std::string> text = ReadLocalFile(path, stdin_stream);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<radix::TokenId>> tokens = ParseTokens(*text);
  if (!tokens.ok()) {
    return UsageError(absl::StrCat("token file ", path == "-" ? "<stdin>" : path, ": ",
                                   tokens.status().message()));
  }
  return tokens;
}

}  // namespace strata::cli
