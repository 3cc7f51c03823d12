// ClusterBackend: what a Client connected to a cluster (ClientOptions::cluster or
// cluster_nodes) runs its calls on — a ClusterClient, and what the Client API needs on top
// of it (client.h, "On a cluster").
//
// The Client API names blobs, not nodes: a Read of a Match's segments, a Write continuing a
// Parent, a ReadRange. The backend remembers, for the blobs its Matches and Writes met, the
// node holding each (and its hot holders and move target) and the token sequence through
// it, in a bounded table (kRememberedBlobs, oldest out first). A Read of segments asks the
// remembered nodes (a blob not remembered: ClusterClient::Locate, a Stat at every node); a
// Write continuing a Parent takes the sequence's earlier tokens from the table (else
// ClusterClient::TokensBefore gathers them from the nodes) and writes the whole piece range
// with ClusterClient::Write, segment by segment to their owners.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

#include "client/lib/async_executor.h"
#include "strata/client.h"
#include "strata/cluster_client.h"

namespace strata::client_internal {

class ClusterBackend {
 public:
  // Blobs whose node and sequence are remembered at most.
  static constexpr size_t kRememberedBlobs = 1 << 16;

  // REQUIRES: options.on_cluster(). Connects the ClusterClient (its node options: these,
  // without the cluster).
  static absl::StatusOr<std::unique_ptr<ClusterBackend>> Connect(const ClientOptions& options);

  ClusterClient& cluster() { return *cluster_; }
  AsyncExecutor& executor() { return executor_; }

  absl::StatusOr<MatchResult> Match(const Namespace& ns, absl::Span<const TokenId> tokens,
                                    LookupPhase phase, const CallOptions& call);
  // Client::Read / ReadLayers (on_layer null: Read) of a Match's segments.
  absl::Status ReadPrefix(const Namespace& ns, absl::Span<const Segment> segments, uint32_t pages,
                          const MemoryDescriptor& destination,
                          absl::FunctionRef<absl::Status(uint32_t)>* on_layer,
                          const CallOptions& call);
  // Client::ReadInto: each node's segments into their places, all nodes at once.
  absl::Status ReadInto(const Namespace& ns, absl::Span<const Segment> segments,
                        uint32_t total_pages, const MemoryDescriptor& destination,
                        const CallOptions& call);
  // Client::Read of ranges: each node's ranges in one Read, all nodes at once.
  absl::Status ReadRanges(const Namespace& ns, absl::Span<const ReadRange> ranges,
                          absl::Span<const MemoryDescriptor> destinations, const CallOptions& call);
  std::vector<absl::Status> ReadBatch(const Namespace& ns, absl::Span<const ReadItem> items,
                                      const CallOptions& call);
  absl::StatusOr<WriteResult> Write(const Namespace& ns, const std::optional<Parent>& parent,
                                    absl::Span<const TokenId> tokens,
                                    const MemoryDescriptor& source, const CallOptions& call);
  // Items one after another (an item naming parent_item continues the blob it wrote).
  std::vector<absl::StatusOr<WriteResult>> WriteBatch(const Namespace& ns,
                                                      absl::Span<const WriteItem> items,
                                                      const CallOptions& call);
  absl::StatusOr<BlobInfo> Stat(const BlobKey& key, bool include_tokens, const CallOptions& call);
  // The sum over the clients of the nodes in the view.
  ClientStats stats() const;

 private:
  struct Remembered {
    std::string node;
    std::string move_to;
    std::vector<std::string> holders;
    std::shared_ptr<const std::vector<TokenId>> sequence;  // from page 0, whole pages
    uint32_t through = 0;  // the sequence runs through the blob up to this page
  };

  ClusterBackend(std::unique_ptr<ClusterClient> cluster, int async_threads);
  void Remember(const BlobKey& key, Remembered entry) ABSL_LOCKS_EXCLUDED(mu_);
  std::optional<Remembered> Recall(const BlobKey& key) const ABSL_LOCKS_EXCLUDED(mu_);
  // The node holding `key`: remembered, else located.
  absl::StatusOr<std::string> NodeOf(const BlobKey& key, const CallOptions& call);
  // A ClusterMatch of `segments` (in page order from page 0) for ClusterClient's reads.
  absl::StatusOr<ClusterMatch> MatchOf(const Namespace& ns, absl::Span<const Segment> segments,
                                       const CallOptions& call);

  std::unique_ptr<ClusterClient> cluster_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<BlobKey, Remembered> remembered_ ABSL_GUARDED_BY(mu_);
  std::deque<BlobKey> order_ ABSL_GUARDED_BY(mu_);  // oldest first
  AsyncExecutor executor_;  // last: its destructor runs the queued calls first
};

}  // namespace strata::client_internal
