#include "strata/tiering/carved_tier.h"

#include <string>

#include "absl/strings/str_cat.h"

#include "strata/report/tier.h"

namespace strata::tiering {

absl::StatusOr<Extent> CarvedTier::Allocate(uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  return allocator_.Allocate(bytes);
}

void CarvedTier::Free(const Extent& extent) {
  absl::MutexLock lock(&mu_);
  allocator_.Free(extent);
}

absl::Status CarvedTier::CheckRange(const Extent& extent, uint64_t offset, uint64_t size) const {
  if (extent.length == 0 || extent.offset > capacity_ ||
      extent.length > capacity_ - extent.offset) {
    return absl::InvalidArgumentError(absl::StrCat("extent [", extent.offset, ", +", extent.length,
                                                   ") is not inside the ",
                                                   std::string(report::TierName(kind())), " tier"));
  }
  if (offset > extent.length || size > extent.length - offset) {
    return absl::OutOfRangeError(absl::StrCat("range [", offset, ", +", size,
                                              ") leaves the extent of ", extent.length, " bytes"));
  }
  return absl::OkStatus();
}

TierStats CarvedTier::Stats() const {
  TierStats stats = counters_.Snapshot();
  stats.tier = kind();
  stats.capacity_bytes = capacity_;
  absl::MutexLock lock(&mu_);
  stats.used_bytes = allocator_.live_bytes();
  stats.blobs = allocator_.live_extents();
  return stats;
}

ExtentAllocatorStats CarvedTier::AllocatorStats() const {
  absl::MutexLock lock(&mu_);
  return allocator_.Stats();
}

double CarvedTier::ExternalFragmentation() const {
  absl::MutexLock lock(&mu_);
  return allocator_.ExternalFragmentation();
}

}  // namespace strata::tiering
