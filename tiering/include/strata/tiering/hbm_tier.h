// HbmTier: device memory as a tier (report::Tier::kHbm): one gpu::Device::Allocate of
// `capacity_bytes`, carved by an ExtentAllocator like the DRAM arena. The node engine will
// keep copies of hot DRAM blobs here (docs/design/hbm-tier.md: an inclusive cache above
// DRAM); this is the byte store, with no policy of its own.
//
// Moving bytes: Write / Read copy between host memory and the extent through the device on
// the tier's stream (synchronous: they return once the copy completed; the host side may be
// pageable, pinned, or the registered DRAM arena). DeviceAddress gives an extent's device
// pointer for device-to-device copies and kernels (a same-host GPU reader through CUDA IPC).
//
// Errors: Create: INVALID_ARGUMENT bad allocator options (ExtentAllocator::Validate), the
// device's Allocate errors (RESOURCE_EXHAUSTED: not that much device memory). Allocate / Free /
// Read / Write as in Tier; a failed device copy is the device's status (INTERNAL, UNAVAILABLE).
// Thread safety: all methods are thread-safe; copies of different callers take turns on the
// tier's stream. REQUIRES: the Device outlives the tier (it is shared).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

#include "strata/gpu/device.h"
#include "strata/tiering/carved_tier.h"
#include "strata/tiering/extent_allocator.h"
#include "strata/tiering/tier.h"

namespace strata::tiering {

// The pool's size and carving: capacity_bytes (REQUIRES: > 0, a multiple of granule_bytes)
// and the allocator's shape.
using HbmTierOptions = ExtentAllocatorOptions;

class HbmTier final : public CarvedTier {
 public:
  static absl::StatusOr<std::unique_ptr<HbmTier>> Create(std::shared_ptr<gpu::Device> device,
                                                         const HbmTierOptions& options);
  HbmTier(const HbmTier&) = delete;
  HbmTier& operator=(const HbmTier&) = delete;
  ~HbmTier() override;

  gpu::Device& device() const { return *device_; }
  // The extent's first byte in device memory. REQUIRES: a live extent of this tier.
  void* DeviceAddress(const Extent& extent) const;
  // A handle to the whole pool another process of this machine opens with
  // gpu::Device::OpenIpc (CUDA IPC): extents are then offsets from the base it returns.
  // The device's ExportIpc errors.
  absl::StatusOr<std::string> ExportIpc() const;

  report::Tier kind() const override { return report::Tier::kHbm; }
  absl::Status Write(const Extent& extent, uint64_t offset,
                     absl::Span<const std::byte> src) override ABSL_LOCKS_EXCLUDED(copy_mu_);
  absl::Status Read(const Extent& extent, uint64_t offset, absl::Span<std::byte> dst) const override
      ABSL_LOCKS_EXCLUDED(copy_mu_);

 private:
  HbmTier(std::shared_ptr<gpu::Device> device, gpu::DeviceBuffer pool, gpu::Stream stream,
          const ExtentAllocatorOptions& allocator_options);

  // Declared first: destroyed last, after the buffer and stream it made.
  const std::shared_ptr<gpu::Device> device_;
  gpu::DeviceBuffer pool_;
  mutable absl::Mutex copy_mu_;
  mutable gpu::Stream stream_ ABSL_GUARDED_BY(copy_mu_);
};

}  // namespace strata::tiering
