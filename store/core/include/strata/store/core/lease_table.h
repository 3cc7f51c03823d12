// LeaseTable: read leases. A lease has an id, an expiry, and the blobs it covers (by key,
// with the record id of the incarnation it holds: a key can be re-put while an old
// incarnation is still leased).
//
// The table only keeps the bookkeeping; the NodeEngine counts leases on its records and
// frees bytes. Time is passed in (the engine reads its Clock), so the table is pure and
// easy to test. A lease is expired at and after its expiry instant.
//
// Thread safety: thread-compatible (the NodeEngine guards it with its mutex).
// Errors:
//   Renew     NOT_FOUND unknown or expired lease
//   Find      NOT_FOUND unknown or expired lease; PERMISSION_DENIED blob not under it
//   Remove    NOT_FOUND unknown lease (an expired one that is still here is removed)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "strata/radix/blob_key.h"
#include "strata/store/core/access_scope.h"
#include "strata/tiering/blob_id.h"

namespace strata::store::core {

struct Lease {
  uint64_t id = 0;
  absl::Time expiry = absl::InfinitePast();
  // Distinct keys, each with the record it holds.
  std::vector<std::pair<radix::BlobKey, tiering::BlobId>> blobs;
  // The tenant whose Read took it (counted per tenant: NodeEngineOptions::max_tenant_leases).
  std::string tenant;
};

class LeaseTable {
 public:
  // Adds a lease. REQUIRES: `lease.id` is not in the table, blob keys are distinct.
  const Lease& Grant(Lease lease);
  // Sets the expiry of a live lease.
  absl::StatusOr<absl::Time> Renew(uint64_t id, absl::Time now, absl::Time expiry);
  // The record `key` is held through under lease `id`.
  absl::StatusOr<tiering::BlobId> Find(uint64_t id, const radix::BlobKey& key,
                                       absl::Time now) const;
  // Whether `id` is a live lease at `now`.
  bool Live(uint64_t id, absl::Time now) const;
  // Removes the lease and returns it.
  absl::StatusOr<Lease> Remove(uint64_t id);
  // Removes and returns every lease expired at `now`.
  std::vector<Lease> TakeExpired(absl::Time now);

  size_t size() const { return leases_.size(); }
  // Leases of `tenant` in the table (expired ones not yet taken included).
  size_t tenant_count(const std::string& tenant) const;
  // False when lease `id` exists and its tenant is outside `scope` (the caller must then
  // answer Unknown(id), as for a lease that does not exist).
  bool Visible(uint64_t id, const AccessScope& scope) const;
  // NOT_FOUND "lease <id> is not known to this node".
  static absl::Status Unknown(uint64_t id);

 private:
  void Forget(const Lease& lease);

  absl::flat_hash_map<uint64_t, Lease> leases_;
  absl::flat_hash_map<std::string, size_t> per_tenant_;  // tenants with leases
};

}  // namespace strata::store::core
