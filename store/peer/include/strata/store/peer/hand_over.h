// Hand-over: a node leaving its cluster gives its hot segments to their new owners before it
// deregisters (issue 13, "Join, drain, leave"; `strata cluster drain NODE`, Admin.Leave).
//
// What is handed over. The node's linked blobs with bytes, grouped into segments: a segment is
// a blob without a parent (a sequence's first blob, or one put with a SegmentStart) and every
// blob continuing it. Segments that were read (hits > 0) go, hottest first (reads, then the
// last access), while their bytes fit in `max_bytes`; segments never read since they were
// written stay (cold: their next reader misses, or finds the TEXT replica). TEXT blobs, and
// the blobs below them, are not handed over (their text has replicas already).
//
// Where. Each segment's owner among the serving and joining nodes of `members` (this node is
// draining, so never itself), by the same placement as ClusterClient: the rendezvous winner
// of the hash through the segment's first page.
//
// How. Blob by blob, parents first: a lease on the blob's bytes in this node's engine (SSD
// blobs are read back in, as any Read), then an ordinary Client::Write to the owner over its
// data plane — a segment's first blob with its SegmentStart (or from page 0), the others
// naming their parent — so the owner verifies every chunk checksum as for any put. A blob the
// owner has already counts as handed over without bytes sent.
//
// Errors: only INVALID_ARGUMENT for bad options; a segment that fails (the owner unreachable,
// refusing, out of space) is counted in `failures` and the rest go on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "strata/store/cluster/node_record.h"
#include "strata/store/core/node_engine.h"

namespace strata::store::peer {

struct HandOverOptions {
  std::string self_id;                           // this node's id (never an owner)
  uint64_t max_bytes = 0;                        // KV bytes to hand over at most; 0: none
  std::string token;                             // bearer token for the owners (their tenants file)
  absl::Time deadline = absl::InfiniteFuture();  // stop handing over then
};

struct HandOverReport {
  uint64_t segments = 0;              // segments handed over whole
  uint64_t blobs = 0;                 // their blobs
  uint64_t bytes = 0;                 // KV bytes sent (blobs the owner had already: none)
  uint64_t blobs_existing = 0;        // blobs the owner had already
  uint64_t cold_segments = 0;         // never read: left
  uint64_t over_budget_segments = 0;  // read, but past max_bytes (or the deadline): left
  uint64_t text_blobs = 0;            // TEXT (no bytes): left
  uint64_t failures = 0;              // segments that failed part-way
  uint64_t held_bytes = 0;            // KV bytes of every segment the node held
};

absl::StatusOr<HandOverReport> HandOverSegments(core::NodeEngine& engine,
                                                const std::vector<cluster::NodeRecord>& members,
                                                const HandOverOptions& options);

}  // namespace strata::store::peer
