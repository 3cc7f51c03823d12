// PutTable: the node's pending puts (between BeginPut and CommitPut/AbortPut), by put id,
// and which blob keys a pending put is filling.
//
// What it owns: each PendingPut (its sequence tokens, its prefix pin, its received ranges,
// its deadline, whether it is committing). Each put's BlobRecord (id = put id, state
// kPending) is the BlobTable's; taking a put out (Take) hands the PendingPut back, and the
// caller unlinks and releases the record. A PendingPut pointer or reference from Add,
// Find or Get stays valid until the next Add or Take. Expiry: a put not touched for put_ttl is
// expired (Expired, ExpiredIds) unless its commit is in progress; the caller aborts it.
//
// Thread safety: thread-compatible, no lock of its own, on purpose: a put is one with its
// record in the BlobTable (BeginPut's "already pending or committed?" check and the
// insertion, and every abort, change both at once), so the table is guarded by the same
// lock as the BlobTable, the engine's index lock. REQUIRES: that lock held for every call
// (shared for the const ones). The bytes a put receives are not touched here.
//
// Accounting and limits (PutLimits): the table counts its puts, the DRAM bytes they reserve
// (in all and per tenant) and the heap their metadata takes (tokens, sequence, checksums,
// records: MetadataBytes). Admit says, before BeginPut allocates or evicts anything, whether
// one more put fits: a put that can never fit the tier beside what pending puts reserve, or
// that would pass a limit, is RESOURCE_EXHAUSTED naming the limit. A tenant's first pending
// put and the table's first are admitted whatever their size (up to the tier).
//
// Errors: Validate INVALID_ARGUMENT (a malformed request); Admit RESOURCE_EXHAUSTED; NotFound
// builds the NOT_FOUND every put call answers for an unknown or expired put.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"

#include "strata/radix/blob_key.h"
#include "strata/radix/namespace.h"
#include "strata/store/core/node_engine_types.h"
#include "strata/store/core/pending_put.h"

namespace strata::store::core {

// What pending puts may hold at once (NodeEngineOptions: max_pending_puts, ...).
struct PutLimits {
  size_t max_puts = 4096;
  uint64_t max_metadata_bytes = uint64_t{256} << 20;
  uint64_t max_bytes = UINT64_MAX;         // DRAM bytes reserved by all pending puts
  uint64_t max_tenant_bytes = UINT64_MAX;  // ... by one tenant's
};

// What pending puts hold now.
struct PutUsage {
  size_t puts = 0;
  uint64_t bytes = 0;           // DRAM reserved
  uint64_t metadata_bytes = 0;  // heap (MetadataBytes)
};

class PutTable {
 public:
  // REQUIRES: put_ttl > 0.
  explicit PutTable(absl::Duration put_ttl, PutLimits limits = {})
      : put_ttl_(put_ttl), limits_(limits) {}
  PutTable(const PutTable&) = delete;
  PutTable& operator=(const PutTable&) = delete;

  // What BeginPut checks of a request before looking at any state: tokens non-empty and
  // whole pages of `ns`, at most 2^32-1 pages, bytes == pages * BytesPerPage() and at
  // most max_blob_bytes, one checksum per chunk. INVALID_ARGUMENT otherwise. No lock.
  static absl::Status Validate(const radix::Namespace& ns, const PutRequest& request,
                               uint64_t max_blob_bytes);
  // What BeginPut checks of a parent it found: a new blob of `pages` pages continuing after
  // `first_page` pages of the sequence must start inside or at the end of `parent`
  // (FAILED_PRECONDITION otherwise) and end before page 2^32-1 (INVALID_ARGUMENT). No lock
  // (the fields read never change).
  static absl::Status CheckParent(const BlobRecord& parent, uint32_t first_page, uint32_t pages);

  // The heap a pending put of `tokens` new tokens, a `sequence_tokens`-token sequence and
  // `checksums` chunk checksums takes (its record and PendingPut included).
  static uint64_t MetadataBytes(size_t tokens, size_t sequence_tokens, size_t checksums);
  // OK when one more put of `bytes` DRAM bytes and `metadata_bytes` of metadata by `tenant`
  // fits beside the pending ones in a DRAM tier of `capacity` bytes; RESOURCE_EXHAUSTED
  // naming the limit otherwise. Checked before anything is allocated or evicted.
  absl::Status Admit(const std::string& tenant, uint64_t bytes, uint64_t metadata_bytes,
                     uint64_t capacity) const;
  PutUsage usage() const { return usage_; }
  uint64_t tenant_bytes(const std::string& tenant) const;

  // Adds the put of `put.record` (its id is the put id) with deadline now + put_ttl and
  // returns it. REQUIRES: no put of that id or of that key is pending.
  PendingPut& Add(PendingPut put, absl::Time now);
  // The pending put `put_id`, or nullptr.
  PendingPut* Find(uint64_t put_id);
  // The put `put_id`. REQUIRES: pending.
  PendingPut& Get(uint64_t put_id);
  // Removes and returns the put `put_id` (the caller releases its record). REQUIRES: pending.
  PendingPut Take(uint64_t put_id);

  // Whether a pending put is filling `key`.
  bool Filling(const radix::BlobKey& key) const { return by_key_.contains(key); }
  // Whether `put` has expired at `now` (a committing put never does).
  static bool Expired(const PendingPut& put, absl::Time now) {
    return !put.committing && now >= put.deadline;
  }
  // Moves the put's deadline to now + put_ttl.
  void Touch(PendingPut& put, absl::Time now) const { put.deadline = now + put_ttl_; }
  absl::Time Deadline(absl::Time now) const { return now + put_ttl_; }
  // Ids of the puts expired at `now`.
  std::vector<uint64_t> ExpiredIds(absl::Time now) const;

  size_t size() const { return puts_.size(); }
  bool empty() const { return puts_.empty(); }

  // NOT_FOUND for put `put_id`: unknown, or (expired) just aborted for inactivity.
  static absl::Status NotFound(uint64_t put_id, bool expired);

 private:
  static uint64_t MetadataOf(const PendingPut& put);

  const absl::Duration put_ttl_;
  const PutLimits limits_;
  PutUsage usage_;
  absl::flat_hash_map<std::string, uint64_t> tenant_bytes_;  // tenants with pending puts
  absl::flat_hash_map<uint64_t, PendingPut> puts_;
  absl::flat_hash_map<radix::BlobKey, uint64_t> by_key_;  // key -> put id
};

}  // namespace strata::store::core
