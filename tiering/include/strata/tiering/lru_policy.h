// LruPolicy ("lru"): least-recently-used eviction, the baseline every other policy is
// measured against.
//
// Priority = the tick of the blob's last insert or access (PriorityPolicy over the
// LeafFirstIndex), ranked by recency alone (LeafFirstIndex::Shape::kPriorityOnly): blobs
// with a tracked child are not put last, the engine's `evictable` decides what may go.
// Insert and access move a blob to the most-recent end. Every event is O(log n);
// CollectVictims walks from the least recent end, O(log n + blobs skipped + victims).
// It uses only BlobTraits::bytes (and parent, for the index's child counts).
// Score(id) is the logical tick of the blob's last insert or access (higher = more recent).
//
// Thread safety: thread-compatible (see EvictionPolicy). Errors: none.
#pragma once

#include <string_view>

#include "strata/tiering/priority_policy.h"

namespace strata::tiering {

class LruPolicy final : public PriorityPolicy {
 public:
  LruPolicy() : PriorityPolicy(LeafFirstIndex::Shape::kPriorityOnly) {}

  std::string_view name() const override { return "lru"; }
  // The priority function: the last touch.
  double Priority(const BlobView& blob) const override {
    return static_cast<double>(blob.last_touch);
  }
};

}  // namespace strata::tiering
