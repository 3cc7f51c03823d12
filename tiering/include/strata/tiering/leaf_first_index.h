// LeafFirstIndex: the one eviction structure of strata. Every eviction policy (LruPolicy,
// BranchLruPolicy, GdsfPolicy, tiering/sim's BeladyPolicy) is a priority function over it,
// and the node engine and the policy replay drive it through the same PriorityPolicy code.
//
// What it holds: a tier's tracked blobs (ids, as the engine names them) with what a policy
// may rank them by: their BlobTraits (size, shape, parent, session hint) as last inserted,
// the structure's logical clock ticks of their insert and last touch, their touch count, and
// one `mark` per blob that the policy sets with each touch or on its own (a policy's input
// that is not in the blob: GDSF's aging floor at the touch, Belady's next use, BranchLru's
// "abandoned" flag). Parent links (BlobTraits::parent) give each blob a count of tracked
// children.
//
// Order (what CollectVictims walks): by (has a tracked child, priority, last touch, id) for
// Shape::kLeavesFirst: blobs without a tracked child (the leaves a leaf-first engine can
// evict) first, lowest priority first, ties to the blob touched earlier; then the blobs with
// a child in the same order, as a fallback for an engine whose `evictable` allows more than
// leaves. Shape::kPriorityOnly drops the first component (LruPolicy: recency alone; the
// engine's `evictable` decides shape). The priority is EvictionPriority::Priority of the
// blob's view, recomputed whenever the blob's own fields change (insert, touch, mark).
//
// Links: a child counts in its parent when the parent is tracked at the child's insert (or
// at a re-insert that moves it under a new parent). A blob erased while its children stay
// tracked unlinks them; if it comes back it starts with no counted children (the engine's
// leaf-first `evictable` still protects it). children_ever and newest_child record each
// blob's children inserted while it was tracked (BranchLruPolicy reads them).
//
// Costs: every update is O(log n) (absl::btree_set + flat_hash_map); CollectVictims walks
// the order from the start, O(log n + blobs skipped + victims).
// Ownership: the index does not own its EvictionPriority. REQUIRES: it outlives the index.
// Thread safety: thread-compatible. Errors: none; updates of an untracked id are ignored.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/types/compare.h"

#include "strata/tiering/blob_id.h"
#include "strata/tiering/eviction_policy.h"

namespace strata::tiering {

// What a priority function sees of one tracked blob. Ticks count the index's events (one
// per Insert or Touch), not time.
struct BlobView {
  BlobId id = 0;
  BlobTraits traits;         // as last inserted (traits.parent is its parent link)
  uint64_t insert_tick = 0;  // the tick of the Insert that started tracking it
  uint64_t last_touch = 0;   // the tick of its last Insert or Touch
  uint64_t touches = 0;      // Inserts and Touches since it is tracked (1 after the first)
  double mark = 0;           // the policy's value, from the last Insert, Touch or SetMark
  double priority = 0;       // what it is ranked by: EvictionPriority::Priority(*this)
  uint32_t tracked_children = 0;
  uint32_t children_ever = 0;  // new blobs inserted under it while it was tracked
  BlobId newest_child = 0;     // the last of those; 0 = none, or it was erased
};

// A policy's ranking: lower = evicted sooner (ties: the blob touched earlier, then the lower
// id). REQUIRES: pure (the same value for the same id, traits, insert_tick, last_touch,
// touches and mark; it must not read the child fields, which change without a recompute),
// cheap, never NaN, and it must not call back into the index.
class EvictionPriority {
 public:
  virtual double Priority(const BlobView& blob) const = 0;

 protected:
  ~EvictionPriority() = default;
};

class LeafFirstIndex {
 public:
  enum class Shape { kLeavesFirst, kPriorityOnly };

  explicit LeafFirstIndex(const EvictionPriority* priority, Shape shape = Shape::kLeavesFirst)
      : priority_(priority), shape_(shape) {}
  LeafFirstIndex(const LeafFirstIndex&) = delete;
  LeafFirstIndex& operator=(const LeafFirstIndex&) = delete;

  bool Contains(BlobId id) const { return nodes_.contains(id); }
  // nullptr for an untracked id. The pointer is valid until the next Insert or Erase.
  const BlobView* Find(BlobId id) const;

  // Tracks a new `id` with `traits` and `mark` (touches = 1), linked under traits.parent
  // when that is tracked, and returns true. For a tracked id: replaces its traits (size and
  // parent link included), then touches it with `mark` (see Touch), and returns false.
  bool Insert(BlobId id, const BlobTraits& traits, double mark = 0);
  // Counts a touch of `id` (touches + 1, last touch = the next tick) and records `mark`.
  // Returns false (and does nothing) for an untracked id.
  bool Touch(BlobId id, double mark = 0);
  // Replaces `id`'s mark (its ticks stay).
  void SetMark(BlobId id, double mark);
  // Replaces `id`'s children_ever (a policy that remembers more history than the index).
  void SetChildrenEver(BlobId id, uint32_t children_ever);
  // Stops tracking `id`; clears its parent's newest_child if that is `id`.
  void Erase(BlobId id);

  // EvictionPolicy::CollectVictims over this order.
  void CollectVictims(uint64_t bytes_needed, absl::FunctionRef<bool(BlobId)> evictable,
                      std::vector<BlobId>* victims) const;
  // The first blob in eviction order, or nullptr when nothing is tracked.
  const BlobView* First() const;

  uint64_t size() const { return nodes_.size(); }
  uint64_t tracked_bytes() const { return tracked_bytes_; }

 private:
  struct Node {
    BlobView view;
    uint64_t generation = 0;         // distinct for every Insert of a new id
    uint64_t parent_generation = 0;  // the parent's generation when linked; 0 = not counted
  };
  // (has a tracked child, priority, last touch, id), compared in that order; `inner` is
  // always false for Shape::kPriorityOnly.
  struct OrderKey {
    bool inner = false;
    double priority = 0;
    uint64_t last_touch = 0;
    BlobId id = 0;
  };
  // One three-way comparison per btree probe (a std::tuple's `<` costs two per field).
  struct OrderCompare {
    absl::weak_ordering operator()(const OrderKey& a, const OrderKey& b) const {
      if (a.inner != b.inner)
        return a.inner ? absl::weak_ordering::greater : absl::weak_ordering::less;
      if (a.priority != b.priority) {
        return a.priority < b.priority ? absl::weak_ordering::less : absl::weak_ordering::greater;
      }
      if (a.last_touch != b.last_touch) {
        return a.last_touch < b.last_touch ? absl::weak_ordering::less
                                           : absl::weak_ordering::greater;
      }
      if (a.id != b.id)
        return a.id < b.id ? absl::weak_ordering::less : absl::weak_ordering::greater;
      return absl::weak_ordering::equivalent;
    }
  };

  OrderKey KeyOf(const BlobView& view) const {
    return OrderKey{.inner = shape_ == Shape::kLeavesFirst && view.tracked_children > 0,
                    .priority = view.priority,
                    .last_touch = view.last_touch,
                    .id = view.id};
  }
  // Inserts `view`'s key into order_.
  void Place(const BlobView& view);
  // Counts a touch of `view` (already out of order_) with `mark` and places it again.
  void TouchView(BlobView* view, double mark);
  // Links `node` under `parent`; a new child also counts in children_ever and newest_child.
  void Link(Node* node, BlobId parent, bool new_child);
  void Unlink(Node* node);
  // Adds `delta` (+1 or -1) to a parent's tracked children, regrouping it.
  void CountChild(Node* parent, int delta);

  const EvictionPriority* const priority_;
  const Shape shape_;
  absl::flat_hash_map<BlobId, Node> nodes_;
  absl::btree_set<OrderKey, OrderCompare> order_;
  uint64_t tracked_bytes_ = 0;
  uint64_t generations_ = 0;
  uint64_t clock_ = 0;
};

}  // namespace strata::tiering
