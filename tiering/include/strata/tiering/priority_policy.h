// PriorityPolicy: an EvictionPolicy that is a priority function over the one LeafFirstIndex.
//
// Every policy of strata derives from it (LruPolicy, BranchLruPolicy, GdsfPolicy, and
// tiering/sim's BeladyPolicy), so the node engine and the policy replay drive the same code:
// this class turns the engine's events into index updates, and the policy only says
//   * Priority(view): the blob's rank, lower = evicted sooner (EvictionPriority: pure);
//   * TouchMark(): the value recorded as the blob's mark with each OnInsert and OnAccess
//     (default 0): the policy's input at the moment of the touch, such as GDSF's aging
//     floor or Belady's next use;
//   * and, where the policy learns from the sequence of events (BranchLruPolicy's session
//     forks, GdsfPolicy's aging), the hooks BeforeInsert / AfterInsert / BeforeErase, which
//     may change marks (SetMark) through mutable_index().
// Events:
//   OnInsert(new id)      BeforeInsert (may rewrite the traits to record), index Insert with
//                         TouchMark(), AfterInsert.
//   OnInsert(tracked id)  index Insert: new traits, one touch with TouchMark() (no hooks).
//   OnAccess              index Touch with TouchMark(); ignored for an untracked id.
//   OnErase               BeforeErase, then index Erase; ignored for an untracked id.
// CollectVictims walks the index order; Score(id) is the blob's priority.
//
// Thread safety: thread-compatible (see EvictionPolicy). Errors: none.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "strata/tiering/eviction_policy.h"
#include "strata/tiering/leaf_first_index.h"

namespace strata::tiering {

class PriorityPolicy : public EvictionPolicy, public EvictionPriority {
 public:
  using EvictionPolicy::OnInsert;

  void OnInsert(BlobId id, const BlobTraits& traits) final;
  void OnAccess(BlobId id) final { index_.Touch(id, TouchMark()); }
  void OnErase(BlobId id) final;
  void CollectVictims(uint64_t bytes_needed, absl::FunctionRef<bool(BlobId)> evictable,
                      std::vector<BlobId>* victims) const final {
    index_.CollectVictims(bytes_needed, evictable, victims);
  }
  std::optional<double> Score(BlobId id) const final;
  uint64_t size() const final { return index_.size(); }
  uint64_t tracked_bytes() const final { return index_.tracked_bytes(); }

  // The structure it ranks (for tests and diagnostics).
  const LeafFirstIndex& index() const { return index_; }

 protected:
  explicit PriorityPolicy(LeafFirstIndex::Shape shape = LeafFirstIndex::Shape::kLeavesFirst)
      : index_(this, shape) {}

  virtual double TouchMark() const { return 0; }
  // Before `id` (untracked) is inserted; may rewrite `traits` (what the index records).
  virtual void BeforeInsert(BlobId /*id*/, BlobTraits* /*traits*/) {}
  // After `id` was inserted new (index().Find(id) is its view).
  virtual void AfterInsert(BlobId /*id*/) {}
  // Before the tracked `blob` is erased.
  virtual void BeforeErase(const BlobView& /*blob*/) {}

  LeafFirstIndex& mutable_index() { return index_; }

 private:
  LeafFirstIndex index_;
};

}  // namespace strata::tiering
