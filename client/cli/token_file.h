// Token files: the token ids of a sequence, as text.
//
// Format: unsigned decimal integers in 0..4294967295 (radix::TokenId), separated by any
// mix of blanks, newlines and commas. One pair of enclosing brackets is allowed, so a JSON
// array of token ids (`[1, 2, 3]`, e.g. a tokenizer's output) is a token file too. An empty
// file (or only separators) holds zero tokens.
//
// Errors: ParseTokens returns INVALID_ARGUMENT naming the line and the offending text
// ("line 3: \"12a\" is not a token id (an integer in 0..4294967295)"); ReadTokenFile
// returns ReadLocalFile's errors (local_files.h) as they are, and ParseTokens' errors
// prefixed with the path and marked as usage errors (exit_codes.h).
// Pure functions except for ReadTokenFile's read; thread-safe (stdin excepted: one reader).
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "strata/radix/token_span.h"

namespace strata::cli {

absl::StatusOr<std::vector<radix::TokenId>> ParseTokens(const std::string& text);

// Reads and parses `path`; "-" reads `stdin_stream` to its end.
absl::StatusOr<std::vector<radix::TokenId>> ReadTokenFile(const std::string& path,
                                                          std::istream& stdin_stream);

}  // namespace strata::cli
