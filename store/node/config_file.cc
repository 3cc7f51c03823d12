#include "strata/store/node/config_file.h"

#include <cerrno>
#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

#include "strata/base/absl_view.h"
#include "strata/base/read_file.h"
#include "strata/base/status_macros.h"

namespace strata::store::node {
namespace {

absl::Status LineError(std::string_view path, int line, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(base::AbslView(path), ":", line, ": ", why));
}

}  // namespace

absl::StatusOr<std::vector<ConfigEntry>> ParseConfigText(std::string_view text,
                                                         std::string_view path) {
  std::vector<ConfigEntry> entries;
  absl::flat_hash_set<std::string> seen;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(base::AbslView(text), '\n')) {
    ++number;
    const absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    const size_t eq = trimmed.find('=');
    if (eq == absl::string_view::npos) {
      return LineError(path, number, absl::StrCat("expected key = value, got \"", trimmed, "\""));
    }
    const absl::string_view key = absl::StripAsciiWhitespace(trimmed.substr(0, eq));
    absl::string_view value = absl::StripAsciiWhitespace(trimmed.substr(eq + 1));
    if (key.empty()) return LineError(path, number, "empty key");
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    if (!seen.insert(std::string(key)).second) {
      return LineError(path, number, absl::StrCat("key \"", key, "\" given twice"));
    }
    entries.push_back(ConfigEntry{std::string(key), std::string(value), number});
  }
  return entries;
}

absl::Status ApplyConfigText(std::string_view text, std::string_view path, NodeConfig* config) {
  STRATA_ASSIGN_OR_RETURN(const std::vector<ConfigEntry> entries, ParseConfigText(text, path));
  for (const ConfigEntry& entry : entries) {
    const absl::Status applied = SetNodeOption(entry.key, entry.value, config);
    if (absl::IsNotFound(applied)) {
      return LineError(path, entry.line, absl::StrCat("unknown key \"", entry.key, "\""));
    }
    if (!applied.ok()) return LineError(path, entry.line, applied.message());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadConfigFile(const std::string& path) {
  return base::ReadFileToString(path);
}

}  // namespace strata::store::node
