// EvictionPolicy: decides which blobs of a tier go first when the tier needs room.
//
// A policy only orders blobs; it owns no bytes and evicts nothing itself. The node engine
// reports events (OnInsert when a blob's bytes land in the tier, OnAccess when they are
// read, OnErase when they leave for any reason), and under pressure asks CollectVictims
// for blobs to drop or demote, then evicts those it can and calls OnErase for each.
// Blobs are named by an opaque BlobId (tiering does not know radix); the engine decides
// what may be evicted (leaf-first, never pinned or leased) through the `evictable`
// predicate, so a policy never needs the tree.
//
// Thread safety: thread-compatible. Policies are driven under the engine's lock for the
// tier; no method may run concurrently with a non-const method.
// Errors: none; events for unknown ids are ignored (see each method).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

#include "strata/tiering/blob_id.h"

namespace strata::tiering {

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;

  // The policy's configuration name ("lru").
  virtual std::string_view name() const = 0;

  // `id` now holds `bytes` bytes in the tier. Inserting an id that is already tracked
  // updates its size and counts as an access.
  virtual void OnInsert(BlobId id, uint64_t bytes) = 0;
  // `id` was read. Ignored for an untracked id.
  virtual void OnAccess(BlobId id) = 0;
  // `id` left the tier (evicted, demoted, deleted). Ignored for an untracked id.
  virtual void OnErase(BlobId id) = 0;

  // Appends to `victims`, in eviction order, tracked blobs for which `evictable(id)` is
  // true, until their sizes add up to at least `bytes_needed` or no candidate is left (so
  // the caller must check whether enough was found). The blobs stay tracked until the
  // caller erases them. Appends nothing for bytes_needed == 0. `evictable` must not call
  // back into the policy.
  virtual void CollectVictims(uint64_t bytes_needed, absl::FunctionRef<bool(BlobId)> evictable,
                              std::vector<BlobId>* victims) const = 0;

  // Number of tracked blobs and the sum of their sizes.
  virtual uint64_t size() const = 0;
  virtual uint64_t tracked_bytes() const = 0;
};

// The policy configured by `name`: "lru". INVALID_ARGUMENT for any other name.
absl::StatusOr<std::unique_ptr<EvictionPolicy>> MakeEvictionPolicy(std::string_view name);

}  // namespace strata::tiering
