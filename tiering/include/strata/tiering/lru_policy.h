// LruPolicy: least-recently-used eviction, the baseline every other policy is measured
// against.
//
// Blobs sit in one recency list, least recent first; insert and access move a blob to the
// most-recent end. Every event is O(1): the list is intrusive over a slot vector (indices,
// not pointers) and a flat_hash_map finds a blob's slot. CollectVictims walks from the
// least recent end, so it costs O(blobs skipped + victims).
//
// Thread safety: thread-compatible (see EvictionPolicy). Errors: none.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include "strata/tiering/eviction_policy.h"

namespace strata::tiering {

class LruPolicy final : public EvictionPolicy {
 public:
  LruPolicy() = default;

  std::string_view name() const override { return "lru"; }
  void OnInsert(BlobId id, uint64_t bytes) override;
  void OnAccess(BlobId id) override;
  void OnErase(BlobId id) override;
  void CollectVictims(uint64_t bytes_needed, absl::FunctionRef<bool(BlobId)> evictable,
                      std::vector<BlobId>* victims) const override;
  uint64_t size() const override { return slot_of_.size(); }
  uint64_t tracked_bytes() const override { return tracked_bytes_; }

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};
  struct Slot {
    BlobId id = 0;
    uint64_t bytes = 0;
    uint32_t prev = kNone;  // towards least recent
    uint32_t next = kNone;  // towards most recent
  };

  void Unlink(uint32_t slot);
  void PushMostRecent(uint32_t slot);

  std::vector<Slot> slots_;
  std::vector<uint32_t> spare_slots_;
  absl::flat_hash_map<BlobId, uint32_t> slot_of_;
  uint32_t least_recent_ = kNone;
  uint32_t most_recent_ = kNone;
  uint64_t tracked_bytes_ = 0;
};

}  // namespace strata::tiering
