// CarvedTier: what the memory tiers (the DRAM arena, the HBM tier) share: one contiguous
// range of `capacity` bytes carved into extents by an ExtentAllocator behind a mutex, the
// tier's counters, its stats, and the range check of every Read and Write. A subclass
// owns the memory and moves the bytes (Read, Write) and names its kind().
//
// Errors: Allocate / Free as in Tier; CheckRange INVALID_ARGUMENT an extent not inside the
// tier, OUT_OF_RANGE a range not inside the extent. Thread-safe.
#pragma once

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

#include "strata/tiering/extent_allocator.h"
#include "strata/tiering/tier.h"

namespace strata::tiering {

class CarvedTier : public Tier {
 public:
  uint64_t capacity() const override { return capacity_; }
  absl::StatusOr<Extent> Allocate(uint64_t bytes) override ABSL_LOCKS_EXCLUDED(mu_);
  void Free(const Extent& extent) override ABSL_LOCKS_EXCLUDED(mu_);
  TierStats Stats() const override ABSL_LOCKS_EXCLUDED(mu_);
  TierCounters& counters() override { return counters_; }

  // The allocator's view, including the fragmentation measures.
  ExtentAllocatorStats AllocatorStats() const ABSL_LOCKS_EXCLUDED(mu_);
  double ExternalFragmentation() const ABSL_LOCKS_EXCLUDED(mu_);

 protected:
  // REQUIRES: ExtentAllocator::Validate(options).ok().
  explicit CarvedTier(const ExtentAllocatorOptions& options)
      : capacity_(options.capacity_bytes), allocator_(options) {}

  // OK if [offset, offset + size) lies inside `extent` and `extent` inside the tier.
  absl::Status CheckRange(const Extent& extent, uint64_t offset, uint64_t size) const;

 private:
  const uint64_t capacity_;
  mutable absl::Mutex mu_;
  ExtentAllocator allocator_ ABSL_GUARDED_BY(mu_);
  TierCounters counters_;
};

}  // namespace strata::tiering
