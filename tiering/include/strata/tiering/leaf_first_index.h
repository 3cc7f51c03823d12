// LeafFirstIndex: the ordered set behind the tree-aware eviction policies.
//
// It tracks a tier's blobs with their parent links (BlobTraits::parent), counts each blob's
// tracked children, and keeps every blob in one ordered set by (has a tracked child, key,
// id): blobs without a tracked child (the leaves a leaf-first engine can evict) come first,
// in the policy's key order, then the others in key order, as a fallback for an engine whose
// `evictable` allows more than leaves. A policy chooses the Key (anything ordered by `<`:
// a tick, a double, a tuple) and may hang per-blob data on Extra. Every update is
// O(log n) (absl::btree_set + flat_hash_map); CollectVictims walks the order from the start,
// O(log n + blobs skipped + victims).
//
// Links: a child counts in its parent when the parent is tracked at the child's insert.
// A blob erased while its children stay tracked unlinks them; if it comes back it starts
// with no counted children (the engine's leaf-first `evictable` still protects it).
// Thread safety: thread-compatible. Errors: none; Insert of a tracked id and updates of an
// untracked id are ignored.
#pragma once

#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"

#include "strata/tiering/blob_id.h"

namespace strata::tiering {

struct NoExtra {};

template <typename Key, typename Extra = NoExtra>
class LeafFirstIndex {
 public:
  struct Entry {
    BlobId parent = 0;
    uint64_t parent_generation = 0;  // parent's generation when linked; 0 = not counted
    uint64_t generation = 0;         // distinct for every Insert of a new id
    uint64_t bytes = 0;
    uint32_t tracked_children = 0;
    Key key{};
    Extra extra{};
  };

  bool Contains(BlobId id) const { return entries_.contains(id); }
  const Entry* Find(BlobId id) const {
    const auto it = entries_.find(id);
    return it == entries_.end() ? nullptr : &it->second;
  }
  // Per-blob data of the policy; nullptr for an untracked id. The pointer is valid until
  // the next Insert or Erase.
  Extra* MutableExtra(BlobId id) {
    const auto it = entries_.find(id);
    return it == entries_.end() ? nullptr : &it->second.extra;
  }

  // Tracks `id` under `parent` (0 = none) with `bytes` and `key`; ignored if already tracked.
  void Insert(BlobId id, BlobId parent, uint64_t bytes, const Key& key, const Extra& extra = {}) {
    Entry entry;
    entry.generation = ++generations_;
    entry.bytes = bytes;
    entry.key = key;
    entry.extra = extra;
    auto [it, inserted] = entries_.emplace(id, std::move(entry));
    if (!inserted) return;
    tracked_bytes_ += bytes;
    order_.insert(OrderKey(false, key, id));
    Link(id, parent);
  }

  // Moves `id` under `parent` (0 = none); no-op for an untracked id or an unchanged parent.
  void SetParent(BlobId id, BlobId parent) {
    const auto it = entries_.find(id);
    if (it == entries_.end() || it->second.parent == parent) return;
    Unlink(id);
    Link(id, parent);
  }

  void SetKey(BlobId id, const Key& key) {
    const auto it = entries_.find(id);
    if (it == entries_.end()) return;
    Entry& entry = it->second;
    const bool internal = entry.tracked_children > 0;
    order_.erase(OrderKey(internal, entry.key, id));
    entry.key = key;
    order_.insert(OrderKey(internal, key, id));
  }

  void SetBytes(BlobId id, uint64_t bytes) {
    const auto it = entries_.find(id);
    if (it == entries_.end()) return;
    tracked_bytes_ = tracked_bytes_ - it->second.bytes + bytes;
    it->second.bytes = bytes;
  }

  // Stops tracking `id`; no-op for an untracked id.
  void Erase(BlobId id) {
    const auto it = entries_.find(id);
    if (it == entries_.end()) return;
    Unlink(id);
    const Entry& entry = it->second;
    order_.erase(OrderKey(entry.tracked_children > 0, entry.key, id));
    tracked_bytes_ -= entry.bytes;
    entries_.erase(it);
  }

  // EvictionPolicy::CollectVictims over this order.
  void CollectVictims(uint64_t bytes_needed, absl::FunctionRef<bool(BlobId)> evictable,
                      std::vector<BlobId>* victims) const {
    uint64_t collected = 0;
    for (auto it = order_.begin(); it != order_.end() && collected < bytes_needed; ++it) {
      const BlobId id = std::get<2>(*it);
      if (!evictable(id)) continue;
      victims->push_back(id);
      collected += entries_.find(id)->second.bytes;
    }
  }

  // The first blob in eviction order (a leaf unless none is tracked), or nullptr.
  const Entry* First(BlobId* id) const {
    if (order_.empty()) return nullptr;
    *id = std::get<2>(*order_.begin());
    return Find(*id);
  }

  uint64_t size() const { return entries_.size(); }
  uint64_t tracked_bytes() const { return tracked_bytes_; }

 private:
  using OrderKey = std::tuple<bool, Key, BlobId>;

  void Link(BlobId id, BlobId parent) {
    Entry& entry = entries_.find(id)->second;
    entry.parent = parent;
    entry.parent_generation = 0;
    if (parent == 0 || parent == id) return;
    const auto parent_it = entries_.find(parent);
    if (parent_it == entries_.end()) return;
    entry.parent_generation = parent_it->second.generation;
    Entry& parent_entry = parent_it->second;
    if (parent_entry.tracked_children++ == 0) {
      order_.erase(OrderKey(false, parent_entry.key, parent));
      order_.insert(OrderKey(true, parent_entry.key, parent));
    }
  }

  void Unlink(BlobId id) {
    Entry& entry = entries_.find(id)->second;
    const uint64_t linked_generation = entry.parent_generation;
    entry.parent_generation = 0;
    if (linked_generation == 0) return;
    const auto parent_it = entries_.find(entry.parent);
    // The parent may have been erased (and even re-inserted) since: then this child no
    // longer counts in it.
    if (parent_it == entries_.end() || parent_it->second.generation != linked_generation) return;
    Entry& parent_entry = parent_it->second;
    if (--parent_entry.tracked_children == 0) {
      order_.erase(OrderKey(true, parent_entry.key, entry.parent));
      order_.insert(OrderKey(false, parent_entry.key, entry.parent));
    }
  }

  absl::flat_hash_map<BlobId, Entry> entries_;
  absl::btree_set<OrderKey> order_;
  uint64_t tracked_bytes_ = 0;
  uint64_t generations_ = 0;
};

}  // namespace strata::tiering
