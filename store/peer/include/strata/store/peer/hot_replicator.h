// HotReplicator: a cluster node's hot blobs pushed to the next nodes of their segment's
// ranking (issue 13, "Replicas"), so that readers spread over the copies and the blob stays
// readable — as KV, not only as TEXT — when its owner is lost.
//
// The engine reports a blob once its Reads reach a threshold (NodeEngineOptions::hot_reads,
// the node's cluster_hot_reads). Every `interval` the replicator takes those blobs and, for
// each one this node owns (rank 0 of its segment among the serving and joining members),
// writes it — with the blobs before it in its segment, parents first — to the nodes ranked
// 1 .. copies - 1 (PushChain: ordinary puts over their data planes; a blob a node has already
// sends no bytes). Then it marks each pushed blob with the number of nodes that hold it
// (NodeEngine::MarkReplicated): Match reports it as Segment.replicas, and ClusterClient
// spreads its reads of the segment over those nodes. A blob whose segment this node does
// not own (a replica's own reads, a previous owner's) is skipped; a push that fails is
// counted and not retried (the blob is reported again only if the node restarts).
//
// Thread safety: the replicator runs on its own thread; stats() from any thread. The
// destructor stops the thread (an in-flight push finishes first).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "strata/store/cluster/node_record.h"
#include "strata/store/core/node_engine.h"
#include "strata/store/peer/segment_push.h"

namespace strata::store::peer {

struct HotReplicatorOptions {
  std::string self_id;
  uint32_t copies = 2;  // nodes holding a hot blob, this one included; REQUIRES >= 2
  std::string token;    // bearer token for the other nodes
  absl::Duration interval = absl::Milliseconds(200);
};

struct HotReplicatorStats {
  uint64_t blobs = 0;         // hot blobs replicated (to every target)
  uint64_t pushed_blobs = 0;  // blobs written to targets, their segment's earlier ones included
  uint64_t bytes = 0;         // KV bytes sent
  uint64_t not_owner = 0;     // hot blobs of segments this node does not own: skipped
  uint64_t failures = 0;      // pushes that failed (a target away or full, the blob gone)
};

class HotReplicator {
 public:
  // `members`: the cluster's members now (the node's membership view). REQUIRES: `engine`
  // outlives the replicator.
  HotReplicator(core::NodeEngine* engine, std::function<std::vector<cluster::NodeRecord>()> members,
                HotReplicatorOptions options);
  ~HotReplicator();
  HotReplicator(const HotReplicator&) = delete;
  HotReplicator& operator=(const HotReplicator&) = delete;

  HotReplicatorStats stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Run();
  void Replicate(const radix::BlobKey& key);

  core::NodeEngine* const engine_;
  const std::function<std::vector<cluster::NodeRecord>()> members_;
  const HotReplicatorOptions options_;
  PeerClients clients_;  // the other nodes' clients, kept across pushes; the thread's only
  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  HotReplicatorStats stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: started after everything it uses
};

}  // namespace strata::store::peer
