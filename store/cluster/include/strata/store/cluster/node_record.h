// NodeRecord: what a strata node says about itself in etcd, under
// /strata/<cluster>/nodes/<id> (MembershipKey), attached to the node's etcd lease so that it
// disappears when the node stops refreshing it.
//
// Encoded as a JSON object (human-readable with `etcdctl get`):
//
//   {"id": "3f2a...", "grpc": "127.0.0.1:7400", "dataplane": "127.0.0.1:7401",
//    "http": "127.0.0.1:7402", "state": "serving", "version": "0.1.0",
//    "capacity": {"hbm": 0, "dram": 8589934592, "ssd": 68719476736}, "started_ms": 1764...}
//
// Unknown fields are ignored on decoding (a newer node's record reads as far as it goes).
// Errors: DecodeNodeRecord INVALID_ARGUMENT naming what is wrong (not JSON, a missing or
// mistyped field, an empty id, an unknown state). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace strata::store::cluster {

enum class NodeState {
  kJoining,   // registered, not yet taking its share of segments
  kServing,   // owns segments
  kDraining,  // handing its segments on before it leaves
};

std::string_view NodeStateName(NodeState state);  // "joining", "serving", "draining"

struct NodeRecord {
  std::string id;  // NodeId: 16 lowercase hex digits, kept in the node's data dir
  std::string grpc_address;
  std::string dataplane_address;
  std::string http_address;  // empty: none
  NodeState state = NodeState::kJoining;
  std::string version;
  uint64_t hbm_bytes = 0;
  uint64_t dram_bytes = 0;
  uint64_t ssd_bytes = 0;
  int64_t started_ms = 0;  // Unix milliseconds

  friend bool operator==(const NodeRecord&, const NodeRecord&) = default;
};

std::string EncodeNodeRecord(const NodeRecord& record);
absl::StatusOr<NodeRecord> DecodeNodeRecord(std::string_view json);

// A cluster name: 1 to 64 letters, digits, '.', '_' or '-'. (store/node's config checks
// the same rule itself: node_config stays free of gRPC for its fuzzer.)
bool IsClusterName(std::string_view name);

// "/strata/<cluster>/nodes/" and that plus the id.
std::string MembershipPrefix(const std::string& cluster);
std::string MembershipKey(const std::string& cluster, const std::string& id);

// The node's id: read from <data_dir>/node_id, or made (64 random bits as 16 hex digits) and
// written there (atomically: a temporary file renamed) on the first start, so a node
// restarted on its data dir comes back as itself. Errors: ReadFileToString's when the file
// exists but cannot be read; INTERNAL with the path and errno when it cannot be written;
// DATA_LOSS when it holds something that is not an id.
absl::StatusOr<std::string> LoadOrCreateNodeId(const std::string& data_dir);

}  // namespace strata::store::cluster
