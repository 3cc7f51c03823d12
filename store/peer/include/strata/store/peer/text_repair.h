// TextRepairer: a segment's token text kept on R nodes as the cluster's members change
// (issue 13, "Replicas": "a lost node's spans come back as TEXT from a survivor" — also after
// a second loss).
//
// ClusterClient writes each segment's KV to its owner and TEXT copies to the next R - 1
// nodes of the segment's ranking. When the serving and joining nodes change (a node lost: its
// lease expired; drained; joined), some segments' top-R sets gain a node that does not hold
// their text. Every `interval` the repairer compares the node's membership view with the one
// it last acted on; on a change it lists the engine's blobs, groups them into segments
// (segment_push.h SegmentsOf), and for each segment whose new top R has members the old top R
// had not, copies the segment's token text there: each blob, parents first, as a TEXT put
// (Client::WriteText with the blob's tokens and chunk checksums; a node that has the key
// answers `exists`, and no KV travels).
//
// The first view the node sees (at start, then every `interval` until its view has a
// member) is what the writers placed by; a change within that first interval goes unseen.
//
// A pass in which some copy failed is done again after `retry_after` (copies already made
// answer `exists`), then after twice as long each time (at most kMaxRetryWait: a holder
// that refuses for good — a token it does not accept — costs a pass every few minutes, not
// every few seconds), until one has no failure.
//
// Who copies. Of the nodes that held the segment before (the old top R) and are still
// members, the one ranked best for the segment now — so each segment is copied once, by a
// node expected to hold it. When none survives, each node still holding the segment copies
// it. A survivor that lost its copy (evicted) leaves the segment uncopied.
//
// Thread safety: the repairer runs on its own thread; stats() from any thread. The
// destructor stops the thread (a pass in progress stops between segments).
#pragma once

#include <cstdint>
#include <functional>
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

struct TextRepairOptions {
  std::string self_id;
  uint32_t replicas = 2;  // R: nodes holding a segment's text; REQUIRES >= 2
  std::string token;      // bearer token for the other nodes
  absl::Duration interval = absl::Milliseconds(200);
  // A pass with a failed copy (a holder away, full, refusing) is done again after this long,
  // from the same earlier view, then after twice as long each time, until none fails.
  absl::Duration retry_after = absl::Seconds(5);
};

// The longest wait between passes that retry failed copies.
inline constexpr absl::Duration kMaxRetryWait = absl::Minutes(5);

struct TextRepairStats {
  uint64_t passes = 0;     // passes made: a membership change, or a retry of failed copies
  uint64_t segments = 0;   // segments whose text this node copied to a new holder
  uint64_t text_puts = 0;  // TEXT puts sent (blobs times new holders)
  uint64_t existing = 0;   // of which the holder had the blob already
  uint64_t failures = 0;   // segment copies that failed part-way
};

class TextRepairer {
 public:
  // `members`: the cluster's members now (the node's membership view). REQUIRES: `engine`
  // outlives the repairer.
  TextRepairer(core::NodeEngine* engine, std::function<std::vector<cluster::NodeRecord>()> members,
               TextRepairOptions options);
  ~TextRepairer();
  TextRepairer(const TextRepairer&) = delete;
  TextRepairer& operator=(const TextRepairer&) = delete;

  TextRepairStats stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Run();
  bool Stopping() const ABSL_LOCKS_EXCLUDED(mu_);
  // One pass: the segments whose top R grew from `before` to `now`, copied. Returns the
  // segments whose copy failed.
  uint64_t Repair(const std::vector<cluster::NodeRecord>& before,
                  const std::vector<cluster::NodeRecord>& now);

  core::NodeEngine* const engine_;
  const std::function<std::vector<cluster::NodeRecord>()> members_;
  const TextRepairOptions options_;
  PeerClients clients_;  // the thread's only
  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  TextRepairStats stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: started after everything it uses
};

}  // namespace strata::store::peer
