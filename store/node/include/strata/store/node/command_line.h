// strata-node's command line, and the resolution of the final NodeConfig from all sources.
//
// Syntax: `--key=value` or `--key value` for every option of NodeOptions() (node_config.h);
// a bool option may be given bare (`--dram_populate` = true) but never takes a separate
// value; `--config FILE` (or `--config=FILE`) names the config file; `--help` / `-h`,
// `--version`. Nothing else: a positional argument, `-x`, an unknown --key, or a flag
// given twice is an error.
//
// Precedence (ResolveNodeConfig): defaults < environment (STRATA_DATA -> data_dir) <
// config file < flags. Every value is checked as it is applied, and the result is
// Validate()d.
//
// Errors: ParseCommandLine returns INVALID_ARGUMENT with a one-line message ("unknown flag
// --foo", "flag --grpc_listen needs a value", ...); ResolveNodeConfig returns the config
// file's errors (config_file.h) and INVALID_ARGUMENT "--<key>: <why>" for a bad flag
// value. strata-node prints the message and exits 2.
// Pure functions (ResolveNodeConfig reads the config file and calls `getenv`);
// thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

#include "strata/store/node/node_config.h"

namespace strata::store::node {

struct CommandLine {
  bool help = false;
  bool version = false;
  std::optional<std::string> config_path;
  // (key, value) in command-line order; keys known to NodeOptions().
  std::vector<std::pair<std::string, std::string>> flags;
};

// `args` excludes the program name (argv[1..]).
absl::StatusOr<CommandLine> ParseCommandLine(const std::vector<std::string>& args);

// Looks up an environment variable; nullptr when unset (std::getenv's contract).
using EnvLookup = std::function<const char*(const char*)>;

absl::StatusOr<NodeConfig> ResolveNodeConfig(const CommandLine& command_line,
                                             const EnvLookup& getenv);

}  // namespace strata::store::node
