#include "strata/store/core/lease_table.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace strata::store::core {
namespace {

absl::Status LeaseNotFound(uint64_t id, bool expired) {
  return absl::NotFoundError(
      absl::StrCat("lease ", id, expired ? " has expired" : " is not known to this node"));
}

}  // namespace

bool LeaseTable::Visible(uint64_t id, const AccessScope& scope) const {
  auto it = leases_.find(id);
  return it == leases_.end() || scope.Allows(it->second.tenant);
}

absl::Status LeaseTable::Unknown(uint64_t id) { return LeaseNotFound(id, /*expired=*/false); }

size_t LeaseTable::tenant_count(const std::string& tenant) const {
  auto it = per_tenant_.find(tenant);
  return it == per_tenant_.end() ? 0 : it->second;
}

void LeaseTable::Forget(const Lease& lease) {
  auto it = per_tenant_.find(lease.tenant);
  if (it != per_tenant_.end() && --it->second == 0) per_tenant_.erase(it);
}

const Lease& LeaseTable::Grant(Lease lease) {
  const uint64_t id = lease.id;
  ++per_tenant_[lease.tenant];
  auto [it, inserted] = leases_.emplace(id, std::move(lease));
  CHECK(inserted) << "LeaseTable::Grant: duplicate lease id " << id;
  return it->second;
}

absl::StatusOr<absl::Time> LeaseTable::Renew(uint64_t id, absl::Time now, absl::Time expiry) {
  auto it = leases_.find(id);
  if (it == leases_.end()) return LeaseNotFound(id, false);
  if (now >= it->second.expiry) return LeaseNotFound(id, true);
  it->second.expiry = expiry;
  return expiry;
}

absl::StatusOr<tiering::BlobId> LeaseTable::Find(uint64_t id, const radix::BlobKey& key,
                                                 absl::Time now) const {
  auto it = leases_.find(id);
  if (it == leases_.end()) return LeaseNotFound(id, false);
  if (now >= it->second.expiry) return LeaseNotFound(id, true);
  for (const auto& [blob_key, record_id] : it->second.blobs) {
    if (blob_key == key) return record_id;
  }
  return absl::PermissionDeniedError(
      absl::StrCat("blob ", key.ToHex(), " is not under lease ", id));
}

bool LeaseTable::Live(uint64_t id, absl::Time now) const {
  auto it = leases_.find(id);
  return it != leases_.end() && now < it->second.expiry;
}

absl::StatusOr<Lease> LeaseTable::Remove(uint64_t id) {
  auto it = leases_.find(id);
  if (it == leases_.end()) return LeaseNotFound(id, false);
  Lease lease = std::move(it->second);
  leases_.erase(it);
  Forget(lease);
  return lease;
}

std::vector<Lease> LeaseTable::TakeExpired(absl::Time now) {
  std::vector<Lease> expired;
  for (auto it = leases_.begin(); it != leases_.end();) {
    if (now >= it->second.expiry) {
      Forget(it->second);
      expired.push_back(std::move(it->second));
      leases_.erase(it++);
    } else {
      ++it;
    }
  }
  return expired;
}

}  // namespace strata::store::core
