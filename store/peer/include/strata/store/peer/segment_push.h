// What the node's pushes to its peers share (hand_over.h, hot_replicator.h, text_repair.h): a chain
// of one segment's blobs written to another node, blob by blob under this engine's leases, and the
// placement of a segment as ClusterClient computes it.
//
// Thread-compatible (PeerClients: one user at a time); the functions are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "strata/client.h"
#include "strata/radix/prefix_hash.h"
#include "strata/store/cluster/node_record.h"
#include "strata/store/cluster/placement.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::peer {

struct PushResult {
  uint64_t blobs = 0;     // written, or there already
  uint64_t existing = 0;  // of which the peer had already (no bytes sent)
  uint64_t bytes = 0;     // KV bytes sent
  absl::Status status;    // the first failure (the chain stops there)
};

// Writes `chain` — blobs of one segment, each after the blob it continues (the first one is
// the segment's first blob) — to `to`: each blob's bytes under a lease of `engine`, as
// an ordinary put (a segment start for a first blob past page 0, else its parent).
PushResult PushChain(core::NodeEngine& engine, absl::Span<const core::BlobInfo> chain, Client& to,
                     const CallOptions& call);

// The segment's placement key: the prefix hash through its first page (ClusterClient's
// h_{kS+1}), from its first blob as Stat returns it with tokens. INVALID_ARGUMENT without a
// whole first page of tokens.
absl::StatusOr<radix::PrefixHash> PlacementKey(const core::BlobInfo& first_with_tokens);

// Every linked blob of `engine` (List, page by page; a page token gone stale ends the list).
std::vector<core::BlobInfo> ListAll(core::NodeEngine& engine);

// `blobs` grouped into segments, by the key of the segment's first blob: a segment is a blob
// without a parent (a sequence's first blob, or one put with a SegmentStart) and every blob
// continuing it, parents first (by first page). A blob whose parent is not in `blobs` is
// left out. The pointers point into `blobs`.
std::map<radix::BlobKey, std::vector<const core::BlobInfo*>> SegmentsOf(
    const std::vector<core::BlobInfo>& blobs);

// The placement over `members` as ClusterClient places segments (serving and joining nodes).
cluster::Placement PlacementOf(const std::vector<cluster::NodeRecord>& members);

// Clients of other nodes, made on first use (token: their tenants' bearer token).
class PeerClients {
 public:
  explicit PeerClients(std::string token) : token_(std::move(token)) {}
  absl::StatusOr<Client*> For(const std::string& address);

 private:
  const std::string token_;
  std::map<std::string, std::unique_ptr<Client>> clients_;  // by address
};

}  // namespace strata::store::peer
