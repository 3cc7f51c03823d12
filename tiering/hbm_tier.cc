#include "strata/tiering/hbm_tier.h"

#include <utility>

#include "absl/memory/memory.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

#include "strata/base/status_macros.h"

namespace strata::tiering {

absl::StatusOr<std::unique_ptr<HbmTier>> HbmTier::Create(std::shared_ptr<gpu::Device> device,
                                                         const HbmTierOptions& options) {
  if (device == nullptr) return absl::InvalidArgumentError("HBM tier: no device");
  STRATA_RETURN_IF_ERROR(ExtentAllocator::Validate(options));
  STRATA_ASSIGN_OR_RETURN(gpu::DeviceBuffer pool, device->Allocate(options.capacity_bytes));
  STRATA_ASSIGN_OR_RETURN(gpu::Stream stream, device->CreateStream());
  LOG(INFO) << "HBM tier: " << options.capacity_bytes << " bytes on " << device->name();
  return absl::WrapUnique(
      new HbmTier(std::move(device), std::move(pool), std::move(stream), options));
}

HbmTier::HbmTier(std::shared_ptr<gpu::Device> device, gpu::DeviceBuffer pool, gpu::Stream stream,
                 const ExtentAllocatorOptions& allocator_options)
    : CarvedTier(allocator_options),
      device_(std::move(device)),
      pool_(std::move(pool)),
      stream_(std::move(stream)) {}

HbmTier::~HbmTier() {
  absl::MutexLock lock(&copy_mu_);
  stream_.Reset();
}

absl::StatusOr<std::string> HbmTier::ExportIpc() const { return device_->ExportIpc(pool_); }

void* HbmTier::DeviceAddress(const Extent& extent) const {
  CHECK(extent.offset <= capacity() && extent.length <= capacity() - extent.offset)
      << "extent [" << extent.offset << ", +" << extent.length << ") outside the HBM tier";
  return static_cast<std::byte*>(pool_.data()) + extent.offset;
}

absl::Status HbmTier::Write(const Extent& extent, uint64_t offset,
                            absl::Span<const std::byte> src) {
  STRATA_RETURN_IF_ERROR(CheckRange(extent, offset, src.size()));
  if (src.empty()) return absl::OkStatus();
  absl::MutexLock lock(&copy_mu_);
  STRATA_RETURN_IF_ERROR(
      device_->CopyToDeviceAsync(static_cast<std::byte*>(pool_.data()) + extent.offset + offset,
                                 src.data(), src.size(), stream_));
  return device_->Synchronize(stream_);
}

absl::Status HbmTier::Read(const Extent& extent, uint64_t offset, absl::Span<std::byte> dst) const {
  STRATA_RETURN_IF_ERROR(CheckRange(extent, offset, dst.size()));
  if (dst.empty()) return absl::OkStatus();
  absl::MutexLock lock(&copy_mu_);
  STRATA_RETURN_IF_ERROR(device_->CopyToHostAsync(
      dst.data(), static_cast<const std::byte*>(pool_.data()) + extent.offset + offset, dst.size(),
      stream_));
  return device_->Synchronize(stream_);
}

}  // namespace strata::tiering
