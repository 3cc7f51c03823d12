#include "strata/store/node/command_line.h"

#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#include "strata/base/status_macros.h"
#include "strata/store/node/config_file.h"

namespace strata::store::node {
namespace {

bool IsKnownOption(std::string_view key) {
  for (const NodeOption& option : NodeOptions()) {
    if (option.key == key) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<CommandLine> ParseCommandLine(const std::vector<std::string>& args) {
  CommandLine out;
  absl::flat_hash_set<std::string> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      out.help = true;
      continue;
    }
    if (arg == "--version") {
      out.version = true;
      continue;
    }
    if (!absl::StartsWith(arg, "--") || arg.size() == 2) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected argument \"", arg, "\""));
    }
    const size_t eq = arg.find('=');
    std::string key = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (!IsKnownOption(key))
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", key));
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (IsBoolOption(key)) {
      value = "true";
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return absl::InvalidArgumentError(absl::StrCat("flag --", key, " needs a value"));
    }
    if (!seen.insert(key).second) {
      return absl::InvalidArgumentError(absl::StrCat("flag --", key, " given twice"));
    }
    if (key == "config") {
      if (value.empty()) return absl::InvalidArgumentError("flag --config needs a file name");
      out.config_path = std::move(value);
    } else {
      out.flags.emplace_back(std::move(key), std::move(value));
    }
  }
  return out;
}

absl::StatusOr<NodeConfig> ResolveNodeConfig(const CommandLine& command_line,
                                             const EnvLookup& getenv) {
  NodeConfig config;
  if (const char* data = getenv("STRATA_DATA"); data != nullptr && data[0] != '\0') {
    config.data_dir = data;
  }
  if (command_line.config_path.has_value()) {
    const std::string& path = *command_line.config_path;
    STRATA_ASSIGN_OR_RETURN(const std::string text, ReadConfigFile(path));
    STRATA_RETURN_IF_ERROR(ApplyConfigText(text, path, &config));
  }
  for (const auto& [key, value] : command_line.flags) {
    const absl::Status applied = SetNodeOption(key, value, &config);
    if (!applied.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--", applied.message()));
    }
  }
  STRATA_RETURN_IF_ERROR(config.Validate());
  return config;
}

}  // namespace strata::store::node
