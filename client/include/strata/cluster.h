// A strata cluster's members as etcd holds them (issue 13): what `strata cluster status`
// shows, read by the client from etcd itself (no node is asked).
//
// Cluster URL: "etcd://HOST:PORT[,HOST:PORT...][/NAME]" — etcd's client endpoints and the
// cluster's name (default "default"; the nodes' --cluster). $STRATA_CLUSTER holds one for
// the CLI.
//
// Errors: ParseClusterUrl INVALID_ARGUMENT naming what is wrong (scheme, an endpoint, the
// name). ReadClusterMembers UNAVAILABLE when etcd does not answer within `timeout`.
// Records that do not decode (a newer or foreign writer) are skipped and counted.
// Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace strata {

struct ClusterUrl {
  std::vector<std::string> etcd_endpoints;  // "host:port"
  std::string name = "default";
};

absl::StatusOr<ClusterUrl> ParseClusterUrl(std::string_view url);

struct ClusterNode {
  std::string id;     // 16 hex digits, kept in the node's data dir
  std::string state;  // "joining", "serving", "draining"
  std::string grpc_address;
  std::string dataplane_address;
  std::string http_address;  // "" when the node serves none
  std::string version;
  uint64_t hbm_bytes = 0;
  uint64_t dram_bytes = 0;
  uint64_t ssd_bytes = 0;
  absl::Time started;
};

struct ClusterMembers {
  std::string name;
  std::vector<ClusterNode> nodes;  // by id
  int64_t etcd_revision = 0;
  uint64_t undecodable = 0;  // records skipped
};

absl::StatusOr<ClusterMembers> ReadClusterMembers(const ClusterUrl& url,
                                                  absl::Duration timeout = absl::Seconds(5));

}  // namespace strata
