// libFuzzer: strata-node's configuration — the config file (ApplyConfigText) and the
// command line (ParseCommandLine, then every flag applied), both from the operator and read
// before anything else. Arbitrary text gives a config or INVALID_ARGUMENT, never a crash;
// a config that applies can be validated and checked for exposure.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_split.h"

#include "strata/store/node/command_line.h"
#include "strata/store/node/config_file.h"
#include "strata/store/node/node_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata::store::node;  // NOLINT: the module under test
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  NodeConfig config;
  const absl::Status applied = ApplyConfigText(text, "fuzz.conf", &config);
  if (!applied.ok() && applied.code() != absl::StatusCode::kInvalidArgument) std::abort();
  if (applied.ok()) {
    (void)config.Validate();
    (void)config.CheckExposure();
  }
  // The same bytes as a command line, one argument per line.
  std::vector<std::string> args;
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    args.emplace_back(line);
  }
  const absl::StatusOr<CommandLine> parsed = ParseCommandLine(args);
  if (!parsed.ok()) {
    if (parsed.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    return 0;
  }
  NodeConfig flagged;
  for (const auto& [key, value] : parsed->flags) {
    const absl::Status set = SetNodeOption(key, value, &flagged);
    if (!set.ok() && set.code() != absl::StatusCode::kInvalidArgument) std::abort();
  }
  return 0;
}
