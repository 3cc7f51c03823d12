// LruPolicy: least-recently-used eviction, the baseline every other policy is measured
// against.
//
// Blobs sit in one recency list, least recent first; insert and access move a blob to the
// most-recent end. Every event is O(1): the list is intrusive over a slot vector (indices,
// not pointers) and a flat_hash_map finds a blob's slot. CollectVictims walks from the
// least recent end, so it costs O(blobs skipped + victims). It uses only BlobTraits::bytes.
// Score(id) is the logical tick of the blob's last insert or access (higher = more recent).
//
// Thread safety: thread-compatible (see EvictionPolicy). Errors: none.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include "strata/tiering/eviction_policy.h"

namespace strata::tiering {

class LruPolicy final : public EvictionPolicy {
 public:
  LruPolicy() = default;

  using EvictionPolicy::OnInsert;

  std::string_view name() const override { return "lru"; }
  void OnInsert(BlobId id, const BlobTraits& traits) override;
  void OnAccess(BlobId id) override;
  void OnErase(BlobId id) override;
  void CollectVictims(uint64_t bytes_needed, absl::FunctionRef<bool(BlobId)> evictable,
                      std::vector<BlobId>* victims) const override;
  std::optional<double> Score(BlobId id) const override;
  uint64_t size() const override { return slot_of_.size(); }
  uint64_t tracked_bytes() const override { return tracked_bytes_; }

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};
  struct Slot {
    BlobId id = 0;
    uint64_t bytes = 0;
    uint64_t last_tick = 0;  // clock_ at the last insert or access
    uint32_t prev = kNone;   // towards least recent
    uint32_t next = kNone;   // towards most recent
  };

  void Unlink(uint32_t slot);
  void PushMostRecent(uint32_t slot);

  std::vector<Slot> slots_;
  std::vector<uint32_t> spare_slots_;
  absl::flat_hash_map<BlobId, uint32_t> slot_of_;
  uint32_t least_recent_ = kNone;
  uint32_t most_recent_ = kNone;
  uint64_t tracked_bytes_ = 0;
  uint64_t clock_ = 0;
};

}  // namespace strata::tiering
