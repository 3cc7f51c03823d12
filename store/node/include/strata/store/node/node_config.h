// NodeConfig: everything a strata-node can be told, with its embedded defaults, and the
// one table of options that the config file, the command-line flags, --help and
// docs/operations.md all follow.
//
// Every option has one key. It is written `key = value` in a config file and
// `--key=value` (or `--key value`) on the command line; SetNodeOption applies one, from
// either source. Precedence (command_line.h: ResolveNodeConfig): flags > config file >
// environment (STRATA_DATA for data_dir) > the defaults below.
//
// Value syntax
//   address   host:port, or [v6-address]:port; port 0..65535 (0: the kernel picks one)
//   bytes     an integer with an optional unit: B; KiB MiB GiB TiB (powers of 1024);
//             KB MB GB TB (powers of 1000). Units are case-insensitive. "8GiB", "512MiB".
//   duration  absl::ParseDuration syntax: "30s", "500ms", "10m", "1h30m"; >= 0
//   bool      true/false, yes/no, on/off, 1/0
//
// Errors: SetNodeOption returns NOT_FOUND for an unknown key and INVALID_ARGUMENT
// "<key>: <why>" for a value that does not parse or is out of range. Validate returns
// INVALID_ARGUMENT for combinations (e.g. lease_ttl > max_lease_ttl).
// Pure functions and plain values; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace strata::store::node {

struct NodeConfig {
  // Control plane (gRPC, strata.v1.Store + Admin).
  std::string grpc_listen = "127.0.0.1:7400";
  // Data plane (UCX active messages): where it listens; reported to clients in BeginPut,
  // Read and Health answers.
  std::string dataplane_listen = "127.0.0.1:7401";
  // Tier-stats HTTP endpoint; reserved, not served yet.
  std::string http_listen = "127.0.0.1:7402";
  // Holds the lock/pid file (and later the metadata store and the SSD tier). Created if
  // missing.
  std::string data_dir = "./var";
  // DRAM tier size; 0: sized from free memory (dram_sizing.h). Rounded down to 64 KiB.
  uint64_t dram_bytes = 0;
  bool dram_hugetlb = true;
  bool dram_populate = false;
  // Largest blob a put may carry (<= 1 GiB).
  uint64_t max_blob_bytes = uint64_t{1} << 30;
  absl::Duration lease_ttl = absl::Seconds(30);
  absl::Duration max_lease_ttl = absl::Minutes(10);
  absl::Duration put_ttl = absl::Seconds(60);
  absl::Duration reap_interval = absl::Seconds(1);
  // How long SIGTERM/SIGINT waits for pending puts and held leases before shutting down.
  absl::Duration drain_timeout = absl::Seconds(30);
  // After draining, how long in-flight RPCs get to finish before they are cancelled.
  absl::Duration shutdown_grace = absl::Seconds(5);
  // glog: minimum severity written to stderr (info, warning, error) and VLOG verbosity.
  std::string log_level = "info";
  int log_verbosity = 0;

  // OK, or INVALID_ARGUMENT naming the first inconsistent option.
  absl::Status Validate() const;
};

// One row of the option table.
struct NodeOption {
  std::string_view key;
  std::string_view value_syntax;  // "address", "bytes", "duration", "bool", ...
  std::string_view default_text;  // the default as a person reads it
  std::string_view help;          // one line
};

// Every option, in the order --help and docs/operations.md list them.
absl::Span<const NodeOption> NodeOptions();

// Whether `key` names a bool option (a bare --key flag means true).
bool IsBoolOption(std::string_view key);

// Parses `value` for option `key` into *config. Errors above. REQUIRES: config != nullptr.
absl::Status SetNodeOption(std::string_view key, std::string_view value, NodeConfig* config);

// The usage text printed by --help: synopsis, every option with its default, the
// precedence and where the full documentation lives.
std::string UsageText();

// ---- value parsers (exposed for tests)

// "bytes" above. INVALID_ARGUMENT on anything else or on overflow.
absl::Status ParseByteSize(std::string_view text, uint64_t* out);
// A host:port listen address. INVALID_ARGUMENT without a port, with a port outside
// 0..65535, or an empty host.
absl::Status ParseListenAddress(std::string_view text, std::string* host, int* port);

}  // namespace strata::store::node
