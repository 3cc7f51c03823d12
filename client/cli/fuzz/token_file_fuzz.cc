// libFuzzer: the CLI's token files (ParseTokens: integers separated by blanks, newlines or
// commas, or a JSON array), which users hand to `strata put`, `match` and `prefetch`.
// Arbitrary text gives token ids or INVALID_ARGUMENT, never a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "client/cli/token_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto tokens = strata::cli::ParseTokens(text);
  if (!tokens.ok() && tokens.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
  // Each token took at least one input byte.
  if (tokens.ok() && tokens->size() > size) std::abort();
  return 0;
}
