#include "client/lib/device_context.h"

#include <utility>

#include "strata/base/status_macros.h"

namespace strata::client_internal {

absl::StatusOr<std::unique_ptr<DeviceContext>> DeviceContext::Open(
    std::shared_ptr<gpu::Device> device, size_t staging_bytes) {
  std::unique_ptr<DeviceContext> context(new DeviceContext(std::move(device)));
  gpu::Device& d = *context->device_;
  // Two equal halves, each a multiple of 4 KiB.
  const size_t half = staging_bytes / 2 / 4096 * 4096;
  STRATA_ASSIGN_OR_RETURN(context->staging_, d.AllocatePinnedHost(2 * half));
  STRATA_ASSIGN_OR_RETURN(context->stream_, d.CreateStream());
  for (gpu::Event& event : context->events_) {
    STRATA_ASSIGN_OR_RETURN(event, d.CreateEvent());
  }
  return context;
}

DeviceContext::~DeviceContext() {
  // Nothing may still read or write the staging pool when it is freed.
  if (!stream_.empty()) (void)device_->Synchronize(stream_);
}

}  // namespace strata::client_internal
