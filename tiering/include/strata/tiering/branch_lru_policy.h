// BranchLruPolicy ("branch-lru"): least recently used first among leaves, except that
// branches a session has abandoned go before everything else.
//
// Why: in a prefix cache many blobs that are never read again are dead branches. A chat
// or agent session that forks from an earlier turn (an edit, a retry), that is compacted
// (its history replaced by a summary), or whose last, partial block is re-hashed when the
// next turn appends, leaves the old continuation behind; plain LRU keeps it for a whole
// cache lifetime. Replays of a real and a synthetic trace against LRU and Belady's optimum
// are in tiering/sim/README.md (strata-policy-replay); they are why this policy, and not a
// frequency- or size-based one (GdsfPolicy), is the candidate to replace LRU.
//
// Order (what CollectVictims walks):
//   1. abandoned blobs without a tracked child, least recently touched first;
//   2. other blobs without a tracked child, least recently touched first (LRU);
//   3. blobs with a tracked child, in the same order (only if `evictable` allows them).
// A touch is OnInsert or OnAccess; either also clears the abandoned mark.
//
// A blob becomes abandoned when the policy sees a session move elsewhere:
//   * Session fork (needs BlobTraits::session_hint != 0): OnInsert of a blob of session S
//     whose parent is not S's previous tail (the blob S inserted last). If that tail has not
//     been touched since it was inserted, it and its ancestors of the same session that have
//     not been touched since then are abandoned: the branch the new request did not read.
//     (Compaction looks the same: the new chain starts from the shared prompt.) A hint is
//     trusted only while S mostly continues its own tail (fewer than one fork per
//     kContinuationsPerFork continuations, a continuation being an insert under the tail
//     after a later request read it): a hint shared by concurrent sessions (a namespace)
//     forks on most requests, so it never abandons anything. A hint equal to the blob's own
//     id or to a tracked blob's id is taken for a root blob (store/core passes the
//     sequence's root today) and ignored: every session under one system prompt shares it.
//     So a session id must not be drawn from the BlobId space.
//   * Bypassed only child (no hint needed): OnInsert of a blob under a parent P that had
//     exactly one child C before (ever, while P was tracked), when P was touched after C
//     (the current request read P but went elsewhere). C and its newest descendants that
//     were not touched since P was are abandoned. "Ever one child" keeps a shared prefix
//     (a system prompt read by many sessions) from abandoning its sessions: only the
//     second session that ever continues a given prefix can misfire, once. The policy
//     remembers the ids of recently erased blobs that had two children (a FIFO of
//     max(1024, tracked / 4) ids), so a shared prefix evicted and brought back under the
//     same id stays shared.
// Both walks mark each blob at most once per touch, so they add O(log n) amortized per
// event; every event is O(log n) (LeafFirstIndex).
//
// As a PriorityPolicy: a blob's mark is 1 while it is abandoned, 0 otherwise (every touch
// records 0), and
//   Priority(blob) = blob.last_touch − (blob.mark != 0 ? 2^53 : 0)
// (pure), which orders abandoned leaves first, then the rest, each least recently touched
// first. The session walks run in BeforeInsert, the shared-prefix memory in AfterInsert and
// BeforeErase; they read the index's parent links, children_ever and newest_child.
//
// The engine must report a request's reads (OnAccess, root first) before its new blobs
// (OnInsert, root first), as EvictionPolicy describes. Score(id) = the priority: the tick of
// the blob's last touch, minus 2^53 while it is abandoned (lower = sooner).
// Thread safety: thread-compatible (see EvictionPolicy). Errors: none.
#pragma once

#include <cstdint>
#include <deque>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

#include "strata/tiering/priority_policy.h"

namespace strata::tiering {

class BranchLruPolicy final : public PriorityPolicy {
 public:
  BranchLruPolicy() = default;

  std::string_view name() const override { return "branch-lru"; }
  double Priority(const BlobView& blob) const override {
    const double tick = static_cast<double>(blob.last_touch);
    return blob.mark != 0 ? tick - 9007199254740992.0 : tick;  // 2^53
  }

  // Whether `id` is tracked and currently marked abandoned (for tests and diagnostics).
  bool abandoned(BlobId id) const;
  // Blobs marked abandoned so far (a blob marked twice counts twice).
  uint64_t abandoned_marks() const { return abandoned_marks_; }

 private:
  struct SessionTail {
    BlobId blob = 0;
    uint64_t tick = 0;           // the tick of its insert
    uint32_t continuations = 0;  // new requests that went on from the tail
    uint32_t forks = 0;          // inserts under another parent
  };
  // A hint is trusted to name one session while forks * this < continuations.
  static constexpr uint32_t kContinuationsPerFork = 4;

  void BeforeInsert(BlobId id, BlobTraits* traits) override;
  void AfterInsert(BlobId id) override;
  void BeforeErase(const BlobView& blob) override;

  // Counts a continuation or a fork of `session`; on a fork of a trusted hint, abandons the
  // branch it left.
  void ObserveSession(uint64_t session, BlobId new_parent);
  void AbandonBypassedChild(BlobId parent);
  // Marks `id` abandoned, keeping its tick; returns false if untracked or already marked.
  bool Abandon(BlobId id);

  absl::flat_hash_map<uint64_t, SessionTail> tails_;
  // Recently erased blobs that had two or more children: if one comes back it is still a
  // shared prefix. FIFO, at most max(kMinErasedShared, size() / 4) entries.
  static constexpr uint64_t kMinErasedShared = 1024;
  absl::flat_hash_set<BlobId> erased_shared_;
  std::deque<BlobId> erased_shared_order_;
  uint64_t abandoned_marks_ = 0;
};

}  // namespace strata::tiering
