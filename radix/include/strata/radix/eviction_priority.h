// Eviction order of the radix tree: a priority is a pure function of one node.
//
// RadixTree::Evict removes unpinned leaves lowest priority first. The tree knows
// nothing about policies: it hands each candidate leaf to an EvictionPriority as
// a NodeView (a snapshot of the node's shape and access statistics, by value)
// and orders candidates by the returned double. A new policy (cost-aware:
// expected reuse x recompute cost / bytes, where recompute cost grows with
// depth_pages; frequency/recency hybrids; per-session weights) is a new
// function, never a change to the tree.
//
// Contract for an EvictionPriority:
//   * Pure and deterministic for a given NodeView; it is called once per
//     candidate per Evict call, while the tree's exclusive lock is held, so it
//     must not call back into the tree and should be cheap (no I/O, no locks).
//   * Lower value = evicted earlier. Ties are broken by node creation order
//     (older first), so eviction order is deterministic for a given history.
//   * NaN is not allowed (REQUIRES); it would break the heap order.
//
// Everything in this header is a value type or a pure function; thread-safe.
#pragma once

#include <cstdint>
#include <functional>

#include "strata/radix/blob_key.h"

namespace strata::radix {

// What a priority function may look at. Ticks come from the tree's logical
// clock, which advances once per Insert and once per Match (tree-wide), so
// they order events but carry no wall-clock meaning.
struct NodeView {
  uint64_t last_access_tick = 0;  // last Match (or Insert) that touched it
  uint64_t hit_count = 0;         // Matches that matched >= 1 of its pages
  uint64_t insert_tick = 0;       // when its pages were first inserted
  uint32_t depth_pages = 0;       // pages from the root to the end of this node
  uint32_t pages = 0;             // pages held by this node
  uint32_t page_tokens = 0;       // tokens per page (the tree's page size)
  BlobKey blob;                   // the blob whose pages this node holds
  uint32_t blob_page_offset = 0;  // blob page of this node's first page
  uint32_t child_count = 0;       // 0 for every eviction candidate today
};

// Maps a node to its eviction priority; lower is evicted first.
using EvictionPriority = std::function<double(const NodeView&)>;

// Least recently used first: the baseline policy.
inline EvictionPriority LruPriority() {
  return [](const NodeView& node) { return static_cast<double>(node.last_access_tick); };
}

}  // namespace strata::radix
