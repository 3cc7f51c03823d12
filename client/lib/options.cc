#include "strata/options.h"

#include <cstdlib>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace strata {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

// "host:port" or "[v6]:port", port 1..65535, host non-empty.
absl::Status CheckHostPort(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("node: \"", address, "\" is not host:port (e.g. 127.0.0.1:7400)"));
  }
  const std::string host = address.substr(0, colon);
  if (host.front() == '[' && host.back() != ']') {
    return absl::InvalidArgumentError(
        absl::StrCat("node: \"", address, "\": unterminated [IPv6] host"));
  }
  if (host == "[]") {
    return absl::InvalidArgumentError(absl::StrCat("node: \"", address, "\": empty host"));
  }
  uint32_t port = 0;
  if (!absl::SimpleAtoi(address.substr(colon + 1), &port) || port == 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("node: \"", address, "\": port must be 1..65535"));
  }
  return absl::OkStatus();
}

bool HasTcp(const std::string& transports) {
  for (absl::string_view name : absl::StrSplit(transports, ',')) {
    // "tcp" or a negated list ("^shm") which keeps tcp.
    if (name == "tcp" || name == "all" || (!name.empty() && name.front() == '^' && name != "^tcp"))
      return true;
  }
  return false;
}

}  // namespace

ClientOptions ClientOptions::FromEnvironment() {
  ClientOptions options;
  if (std::string node = Env("STRATA_NODE"); !node.empty()) options.node = node;
  if (std::string tls = Env("STRATA_UCX_TLS"); !tls.empty()) options.ucx_transports = tls;
  if (std::string token = Env("STRATA_TOKEN"); !token.empty()) options.token = token;
  if (Env("STRATA_SAME_HOST") == "0") options.same_host = false;
  if (std::string ca = Env("STRATA_TLS_CA"); !ca.empty()) {
    options.tls = true;
    options.tls_ca_file = ca;
  }
  return options;
}

absl::Status ClientOptions::Validate() const {
  if (!cluster.empty() && !cluster_nodes.empty()) {
    return absl::InvalidArgumentError("cluster and cluster_nodes: set one, not both");
  }
  if (on_cluster()) {
    if (segment_pages == 0) return absl::InvalidArgumentError("segment_pages: must be >= 1");
    if (text_replicas == 0) return absl::InvalidArgumentError("text_replicas: must be >= 1");
    if (node_timeout <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError("node_timeout: must be positive");
    }
    for (const std::string& address : cluster_nodes) {
      if (absl::Status s = CheckHostPort(address); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("cluster_nodes: ", s.message()));
      }
    }
  } else if (absl::Status s = CheckHostPort(node); !s.ok()) {
    return s;
  }
  if (default_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("default_timeout: must be positive");
  }
  if (connect_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("connect_timeout: must be positive");
  }
  if (lease_ttl < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("lease_ttl: must not be negative");
  }
  if (retry.max_retries < 0) {
    return absl::InvalidArgumentError("retry.max_retries: must not be negative");
  }
  if (retry.initial_backoff <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("retry.initial_backoff: must be positive");
  }
  if (retry.max_backoff < retry.initial_backoff) {
    return absl::InvalidArgumentError("retry.max_backoff: must be >= retry.initial_backoff");
  }
  if (!(retry.multiplier >= 1.0)) {
    return absl::InvalidArgumentError("retry.multiplier: must be >= 1");
  }
  if (!(retry.jitter >= 0.0 && retry.jitter <= 1.0)) {
    return absl::InvalidArgumentError("retry.jitter: must be in [0, 1]");
  }
  if (!ucx_transports.empty() && !HasTcp(ucx_transports)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ucx_transports: \"", ucx_transports,
        "\" lacks tcp (UCX's connection manager needs it; e.g. \"tcp\" or \"tcp,shm,cma\")"));
  }
  if (put_message_bytes < 4096) {
    return absl::InvalidArgumentError("put_message_bytes: must be >= 4096");
  }
  if (async_threads < 1) {
    return absl::InvalidArgumentError("async_threads: must be >= 1");
  }
  if (reads_in_flight < 1) {
    return absl::InvalidArgumentError("reads_in_flight: must be >= 1");
  }
  if (device_staging_bytes < (size_t{2} << 20)) {
    return absl::InvalidArgumentError("device_staging_bytes: must be >= 2 MiB");
  }
  if (same_host_connections < 1) {
    return absl::InvalidArgumentError("same_host_connections: must be >= 1");
  }
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    return absl::InvalidArgumentError("tls_cert_file, tls_key_file: give both or neither");
  }
  if (!tls && !(tls_ca_file.empty() && tls_cert_file.empty())) {
    return absl::InvalidArgumentError("tls_ca_file / tls_cert_file given but tls is off");
  }
  for (size_t i = 0; i < token.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(token[i]);
    if (c < 0x21 || c > 0x7e) {  // the token itself is never echoed
      return absl::InvalidArgumentError(absl::StrCat(
          "token: byte ", i, " is not printable ASCII (a space or control character?)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace strata
