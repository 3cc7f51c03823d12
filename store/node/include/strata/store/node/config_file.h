// The strata-node config file: one `key = value` option per line.
//
//   # a comment: the whole line, after optional blanks
//   grpc_listen = 127.0.0.1:7400
//   dram_bytes  = 8GiB
//   data_dir    = "/var/lib/strata"     # NOT a comment: '#' is only special at line start
//
// Blank lines and comment lines are skipped. Blanks around the key and the value are
// trimmed; a value wrapped in double quotes loses them (no escapes inside). The keys and
// value syntax are those of node_config.h (NodeOptions). Each key may appear once.
//
// Errors (all INVALID_ARGUMENT, message "<path>:<line>: <why>"): a line without '=', an
// empty key, a key given twice, an unknown key, a value that does not parse.
// ReadConfigFile adds NOT_FOUND / PERMISSION_DENIED / ... from opening the file
// (base::ErrnoToStatus: "<path>: <strerror> (errno N)").
// Pure functions, apart from ReadConfigFile's read; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "strata/store/node/node_config.h"

namespace strata::store::node {

struct ConfigEntry {
  std::string key;
  std::string value;
  int line = 0;  // 1-based
};

// Splits `text` into entries (syntax above); does not look at the keys' meaning beyond
// duplicates. `path` only names the file in messages.
absl::StatusOr<std::vector<ConfigEntry>> ParseConfigText(std::string_view text,
                                                         std::string_view path);

// Applies every entry of `text` to *config with SetNodeOption.
// REQUIRES: config != nullptr.
absl::Status ApplyConfigText(std::string_view text, std::string_view path, NodeConfig* config);

// The whole file's contents.
absl::StatusOr<std::string> ReadConfigFile(const std::string& path);

}  // namespace strata::store::node
