// EvictionPolicy: decides which blobs of a tier go first when the tier needs room.
//
// A policy only orders blobs; it owns no bytes and evicts nothing itself. The node engine
// keeps one policy per byte tier (DRAM, SSD) over the blobs whose bytes are in that tier and
// reports events: OnInsert when a blob's bytes land in the tier (with its BlobTraits),
// OnAccess when they are read, OnErase when they leave for any reason. Under pressure it asks
// CollectVictims for blobs to drop or demote, evicts those it can and calls OnErase for each.
// Blobs are named by an opaque BlobId (tiering does not know radix); the engine decides what
// may be evicted (leaf-first, never pinned or leased) through the `evictable` predicate, so
// a policy never needs the radix tree.
//
// One eviction model: every policy is a PriorityPolicy (priority_policy.h), i.e. a pure
// priority function over the one leaf-first structure, LeafFirstIndex (leaf_first_index.h),
// which learns the shape from BlobTraits::parent and keeps blobs without a tracked child
// first in its order (what a leaf-first engine can evict). The node engine and the policy
// replay (tiering/sim) drive that same code through this interface.
//
// Events the engine should report, in this order for one request: OnAccess for each blob of
// the matched prefix (root first), then OnInsert for each new blob (root first). Policies
// read their own logical clock (one tick per OnInsert/OnAccess), never wall time.
//
// Policies (MakeEvictionPolicy names):
//   "lru"         LruPolicy: least recently used first (recency alone, not leaves first);
//                 O(log n) per event.
//   "branch-lru"  BranchLruPolicy: LRU over leaves, but branches a session has abandoned
//                 (it forked or compacted elsewhere) go first; O(log n) per event.
//   "gdsf"        GdsfPolicy: GreedyDual-Size-Frequency with a depth-aware recompute cost;
//                 O(log n) per event.
// tiering/sim's strata-policy-replay measures them against each other and against Belady.
//
// Thread safety: thread-compatible. Policies are driven under the engine's lock for the
// tier; no method may run concurrently with a non-const method.
// Errors: none; events for unknown ids are ignored (see each method).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

#include "strata/tiering/blob_id.h"

namespace strata::tiering {

// What a policy may know about a blob when its bytes land in a tier. A blob is a KV span of
// a token sequence: pages [first_page, first_page + pages) of the sequence that starts at
// its namespace's root. Value type; every field has a safe "unknown" default, so a caller
// that knows only the size passes {.bytes = n}.
struct BlobTraits {
  // Bytes the blob occupies in this tier (what CollectVictims adds up).
  uint64_t bytes = 0;
  // Pages of the sequence before this blob (0 for a blob that starts at the root).
  uint32_t first_page = 0;
  // Pages the blob holds. first_page + pages is its depth: recomputing its KV means
  // attending over all of them, so deeper blobs cost more to rebuild.
  uint32_t pages = 0;
  // Tokens per page (the namespace's page size); 0 = unknown.
  uint32_t page_tokens = 0;
  // The blob this one continues (its prefix's last blob); 0 = none (starts at the root) or
  // unknown. REQUIRES: the engine never uses 0 as a BlobId of a blob that has children.
  BlobId parent = 0;
  // Which session (conversation, agent run) wrote the blob, as far as the engine knows:
  // a client-supplied session id, or coarser (the namespace, the root blob); 0 = unknown.
  // BranchLruPolicy uses it to notice a session moving to another branch; it trusts a hint
  // only while the hint behaves like one session (mostly continuing its own latest blob),
  // so a coarse hint costs nothing but gains nothing either; a hint equal to a tracked
  // BlobId is read as a root blob, not a session. A per-session id (e.g. a hash of a
  // client's conversation id) is what lets it notice forks and compaction.
  uint64_t session_hint = 0;

  // Pages from the root to the end of this blob.
  uint64_t depth_pages() const { return uint64_t{first_page} + pages; }
};

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;

  // The policy's configuration name ("lru", "branch-lru", "gdsf").
  virtual std::string_view name() const = 0;

  // `id`'s bytes now sit in the tier, described by `traits`. Inserting an id that is
  // already tracked updates its traits (size included) and counts as an access.
  virtual void OnInsert(BlobId id, const BlobTraits& traits) = 0;
  // Shorthand for a caller that knows only the size: traits {.bytes = bytes}.
  void OnInsert(BlobId id, uint64_t bytes) { OnInsert(id, BlobTraits{.bytes = bytes}); }
  // `id` was read. Ignored for an untracked id.
  virtual void OnAccess(BlobId id) = 0;
  // `id` left the tier (evicted, demoted, deleted). Ignored for an untracked id.
  virtual void OnErase(BlobId id) = 0;

  // Appends to `victims`, in eviction order, tracked blobs for which `evictable(id)` is
  // true, until their sizes add up to at least `bytes_needed` or no candidate is left (so
  // the caller must check whether enough was found). The blobs stay tracked until the
  // caller erases them. Appends nothing for bytes_needed == 0. `evictable` must not call
  // back into the policy. A leaf-first caller may get fewer bytes than exist: a parent
  // becomes evictable only after its children are erased, so it calls again after erasing.
  virtual void CollectVictims(uint64_t bytes_needed, absl::FunctionRef<bool(BlobId)> evictable,
                              std::vector<BlobId>* victims) const = 0;

  // For diagnostics (logs, the replay tool, tests): the policy's current ranking value of
  // `id`, lower = evicted sooner among blobs of the same kind (see each policy); nullopt
  // for an untracked id.
  virtual std::optional<double> Score(BlobId id) const = 0;

  // Number of tracked blobs and the sum of their sizes.
  virtual uint64_t size() const = 0;
  virtual uint64_t tracked_bytes() const = 0;
};

// The policy configured by `name`: "lru", "branch-lru" or "gdsf" (default options).
// INVALID_ARGUMENT for any other name.
absl::StatusOr<std::unique_ptr<EvictionPolicy>> MakeEvictionPolicy(std::string_view name);

}  // namespace strata::tiering
